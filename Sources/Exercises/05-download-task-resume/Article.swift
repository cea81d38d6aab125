/// Exercise 05: the article's code from Sources/lesson-05-download-task-resume/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 05   build this and run it against the lab server
///     swift run lab exercise hint 05    a hint for the first check that fails (or: hint 05 <check>)
///     swift run lab exercise watch 05   check again on every save
///     swift run lab exercise reset 05   back to this starting code
///
/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`
/// and the lab gives the lesson's exit status and a one-line message:
///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69
///     .localIO (a write failed: the disk is full)                               exit 74
///     a file called done that is not the server's                               exit 65
///
/// Swift 6 checks data races. A completion handler or a delegate callback runs on another
/// thread, so the compiler refuses a plain `var` that it changes. The lessons keep such state
/// in a Mutex (`import Synchronization`), which locks every read and write:
///     let received = Mutex<Data?>(nil)
///     session.dataTask(with: request) { data, _, _ in received.withLock { $0 = data } }.resume()
///     ... later: let data = received.withLock { $0 }
/// A delegate whose callbacks all run one at a time on its session's serial delegate queue
/// may say so instead: `@unchecked Sendable`, with a comment why (lessons 04 and 05).
///
/// Read Lessons/05-download-task-resume.md next to this file. This file was made by `lab exercise reset`.
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
    private var partialData: Data?
    private var pausedOnce = false
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        resume()
    }

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
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
        if !pausedOnce, totalBytesWritten < totalBytesExpectedToWrite,
           Double(totalBytesWritten) >= App.pausePressedAt * Double(totalBytesExpectedToWrite) {
            pausedOnce = true
            pause()
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
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
