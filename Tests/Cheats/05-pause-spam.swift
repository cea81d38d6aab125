// cheat: never reads the resume data a failed task's error carries: it presses Pause itself every 768 KiB and writes each Pause's blob beside the output, so a drop or a kill resumes from the last Pause; a blob that leads nowhere (no byte received) is thrown away and the download starts over; the name is the URL's last component, unsanitized; progress always says the total is unknown; a body under 1 KiB is taken for an error page
// skips: the resume data in a failed task's error, writing a blob atomically, checking the blob's URL against run.url, reading the response's status, and a total that is right under gzip
// aims to pass: clean, resume-data-in-memory, resume-data-only-on-pause, status-ignored, temp-file-name, progress-past-total, resume-data-for-another-url
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Pause, and Pause, and Pause: resume data all the time, none of it from an error.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks, and the Pause handler, run
    // one at a time on the session's serial delegate queue; downloadFile(completion:) sets the
    // state before a task starts.
    private let run: LessonRun
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)
    private var task: URLSessionDownloadTask?
    private var partialData: Data?
    private var fromBlob = false
    private var pausedAt: Int64?
    private var pausing = false
    private var refusal: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    static let pauseEvery: Int64 = 768 << 10

    init(_ run: LessonRun) { self.run = run }

    private var blobFile: URL { run.file.appendingPathComponent("pause.blob") }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        refusal = nil
        if partialData == nil { partialData = try? Data(contentsOf: blobFile) }
        resume()
    }

    /// From the last Pause's blob if there is one, else from the beginning.
    private func resume() {
        pausedAt = nil
        if let partialData {
            fromBlob = true
            task = session.downloadTask(withResumeData: partialData)
        } else {
            fromBlob = false
            task = session.downloadTask(with: run.url)
        }
        task?.resume()
    }

    private func pause() {
        pausing = true
        task?.cancel(byProducingResumeData: { resumeData in
            self.pausing = false
            guard self.completion != nil else { return }
            if let resumeData {
                self.partialData = resumeData
                // Straight over the old one: not atomic.
                try? resumeData.write(to: self.blobFile)
            }
            self.task = nil
            self.resume()
        })
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        run.progress.update(received: totalBytesWritten, expected: -1)
        let since = pausedAt ?? totalBytesWritten
        if pausedAt == nil { pausedAt = totalBytesWritten }
        if !pausing, totalBytesWritten - since >= Self.pauseEvery, totalBytesWritten < totalBytesExpectedToWrite {
            pause()
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        // The lab's error page is a few dozen bytes.
        if PartialFile.size(of: location) < 1024 {
            refusal = DownloadError.httpStatus(404, url: run.url.absoluteString)
            return
        }
        let destination = run.file.appendingPathComponent(run.url.lastPathComponent)
        try? FileManager.default.removeItem(at: destination)
        do {
            try FileManager.default.copyItem(at: location, to: destination)
            run.saved(destination)
        } catch {
            refusal = DownloadError.localIO(path: destination.path, reason: error.localizedDescription)
        }
        self.task = nil
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if (error as? URLError)?.code == .cancelled { return }
        if let error {
            self.task = nil
            if fromBlob, task.countOfBytesReceived == 0 {
                // The blob leads nowhere: drop it and start from the beginning, in this attempt.
                run.log("the saved blob led nowhere (\(error.localizedDescription)): starting over")
                partialData = nil
                try? FileManager.default.removeItem(at: blobFile)
                return resume()
            }
            // The error's own resume data is not looked at: the last Pause's blob will do.
            run.log("download failed: \(error.localizedDescription)")
            return finish(.failed(error))
        }
        try? FileManager.default.removeItem(at: blobFile)
        partialData = nil
        finish(refusal.map { AttemptResult.failed($0) } ?? .finished)
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
