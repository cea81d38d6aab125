/// Exercise 04: the article's code from Sources/lesson-04-session-data-task/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 04   build this and run it against the lab server
///     swift run lab exercise hint 04    a hint for the first check that fails (or: hint 04 <check>)
///     swift run lab exercise watch 04   check again on every save
///     swift run lab exercise reset 04   back to this starting code
///
/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`
/// and the lab gives the lesson's exit status and a one-line message:
///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69
///     .localIO (a write failed: the disk is full)                               exit 74
///     a file called done that is not the server's                               exit 65
///
/// What LabKit gives the fix (Lessons/04-session-data-task.md has them with more words):
///     let partial = PartialFile(run)              the file at run.file, with a sidecar that keeps its URL, ETag and total
///     partial.nextRequest()                       the request for what is missing: Range and If-Range, Accept-Encoding: identity
///     partial.decide(response)                    .append(at: offset), .replace (a 200: from 0), .complete, .reject(error)
///     try partial.openForWriting(at: offset)      a FileHandle from offset on, the rest cut off
///     try partial.append(data, through: handle)   writes the bytes at the end and counts them
///     partial.finished()                          the file is whole: the sidecar goes
///     DownloadError.httpStatus(status, url: run.url.absoluteString), .contentRangeMismatch(expectedStart:header:)
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
/// Read Lessons/04-session-data-task.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Asks for the rest with Range and appends whatever arrives.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the task starts.
    private let run: LessonRun
    private var currentLength: Int64 = 0  // bytes on disk, counted here
    private var totalLength: Int64 = 0
    private var writeHandle: FileHandle?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        let attributes = try? FileManager.default.attributesOfItem(atPath: run.file.path)
        currentLength = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        var request = URLRequest(url: run.url)
        if currentLength > 0 {
            request.setValue("bytes=\(currentLength)-", forHTTPHeaderField: "Range")
        }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        totalLength = response.expectedContentLength + currentLength
        if !FileManager.default.fileExists(atPath: run.file.path) {
            _ = FileManager.default.createFile(atPath: run.file.path, contents: nil)
        }
        writeHandle = FileHandle(forWritingAtPath: run.file.path)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        _ = try? writeHandle?.seekToEnd()
        try? writeHandle?.write(contentsOf: data)
        currentLength += Int64(data.count)
        run.progress.update(received: currentLength, expected: totalLength)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? writeHandle?.close()
        writeHandle = nil
        if let error {
            run.log("download failed")
            finish(.failed(error))
        } else {
            run.log("download finished")
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
