/// Lesson 05, the article's variant: the strategy as the article writes it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/05-download-task-resume.md explains it.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Start, Pause and Resume buttons; resume data kept in a property.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks, and the Pause handler, run
    // one at a time on the session's serial delegate queue; downloadFile(completion:) sets the
    // state before a task starts.
    private let run: LessonRun
    private var task: URLSessionDownloadTask?
    // Defect: resume data lives in memory only. A kill or a crash loses it: everything starts over.
    private var partialData: Data?
    private var pausedOnce = false
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        resume()
    }

    /// Weakness: a new session for every task, and none is ever invalidated. Each one keeps its
    /// tasks, their transfers and this delegate alive until the process ends.
    private func session() -> URLSession {
        run.makeSession(delegate: self, delegateQueue: nil)
    }

    /// The Resume button: from the resume data if there is any, else from the beginning.
    private func resume() {
        if task == nil {
            if let partialData {
                task = session().downloadTask(withResumeData: partialData)
            } else {
                task = session().downloadTask(with: run.url)
            }
        }
        task?.resume()
    }

    /// The Pause button: cancel, keeping the resume data.
    private func pause() {
        run.userPressed("Pause", log: "pause")
        task?.cancel(byProducingResumeData: { resumeData in
            // The download may have finished before Pause took hold: then nothing is left to resume.
            guard self.completion != nil else { return }
            self.partialData = resumeData
            self.task = nil
            self.run.log("resume, from \(resumeData?.count ?? 0) bytes of resume data held in memory")
            self.resume()
        })
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        // Defect: under gzip totalBytesExpectedToWrite is the compressed size, and the bytes
        // written are decoded: progress passes 100%.
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
        if !pausedOnce, totalBytesWritten < totalBytesExpectedToWrite,
           Double(totalBytesWritten) >= App.pausePressedAt * Double(totalBytesExpectedToWrite) {
            pausedOnce = true
            pause()
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        // Defect: the response is never looked at. A download task saves any answer's body, so a
        // 404's error page is saved as the file.
        // Defect: the saved file is named after the temporary file, not after the resource.
        let destination = run.file.appendingPathComponent(location.lastPathComponent)
        try? FileManager.default.removeItem(at: destination)
        do {
            try FileManager.default.copyItem(at: location, to: destination)
            run.saved(destination)
        } catch {
            run.log("could not copy the file out of the temporary folder: \(error.localizedDescription)")
        }
        self.task = nil
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // A paused task ends here too, cancelled; its Pause handler does the rest.
        if (error as? URLError)?.code == .cancelled { return }
        // Defect: the resume data a broken transfer carries in its error is not looked at.
        // Only a press of Pause produces any, so after a break the next Resume starts over.
        if let error {
            run.log("download failed: \(error.localizedDescription)")
            self.task = nil
            finish(.failed(error))
        } else {
            finish(.finished)
        }
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        // Cleared before the call: the next Start may hand over a new completion at once.
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
