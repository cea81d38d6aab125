/// Exercise 11: the article's code from Sources/lesson-11-segmented/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 11   build this and run it against the lab server
///     swift run lab exercise hint 11    a hint for the first check that fails (or: hint 11 <check>)
///     swift run lab exercise watch 11   check again on every save
///     swift run lab exercise reset 11   back to this starting code
///
/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`
/// and the lab gives the lesson's exit status and a one-line message:
///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69
///     .localIO (a write failed: the disk is full)                               exit 74
///     a file called done that is not the server's                               exit 65
///
/// What LabKit gives the fix (Lessons/11-segmented.md has them with more words):
///     configuration.httpMaximumConnectionsPerHost = run.connections   at most that many connections at once
///     FileHandle(forWritingTo: run.file) per range, then seek(toOffset:)   a write position of its own
///     handle.truncate(atOffset: total)   the file at its full size before any range writes
///     task.taskDescription   a name for the range a task fills, read back in its callbacks
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
/// Read Lessons/11-segmented.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// A HEAD for the size, then one data task per range on one session, every range written
/// through one shared file handle.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the tasks start.
    private let run: LessonRun
    private var fileHandle: FileHandle?
    private var rangeStarts: [Int: Int64] = [:]
    private var totalLength: Int64 = 0
    private var received: Int64 = 0
    private var unfinished = 0
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session: URLSession = {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        return run.makeSession(delegate: self, delegateQueue: queue)
    }()

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        failure = nil
        var head = URLRequest(url: run.url)
        head.httpMethod = "HEAD"
        session.dataTask(with: head) { [self] _, response, error in
            guard let length = response?.expectedContentLength, length > 0 else {
                return finish(.failed(error ?? DownloadError.httpStatus((response as? HTTPURLResponse)?.statusCode ?? 0, url: run.url.absoluteString)))
            }
            session.delegateQueue.addOperation { self.startRanges(of: length) }
        }.resume()
    }

    /// Splits the file into `run.connections` ranges and starts them all.
    private func startRanges(of length: Int64) {
        totalLength = length
        _ = FileManager.default.createFile(atPath: run.file.path, contents: nil)
        fileHandle = FileHandle(forWritingAtPath: run.file.path)
        let count = Int64(run.connections)
        let rangeLength = length / count
        unfinished = run.connections
        for index in 0..<count {
            let start = index * rangeLength
            let end = index == count - 1 ? length - 1 : start + rangeLength - 1
            var request = URLRequest(url: run.url)
            request.setValue("bytes=\(start)-\(end)", forHTTPHeaderField: "Range")
            let task = session.dataTask(with: request)
            rangeStarts[task.taskIdentifier] = start
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        fileHandle?.seek(toFileOffset: UInt64(rangeStarts[dataTask.taskIdentifier] ?? 0))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        fileHandle?.write(data)
        received += Int64(data.count)
        run.progress.update(received: received, expected: totalLength)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard rangeStarts[task.taskIdentifier] != nil else { return }
        if let error, failure == nil { failure = error }
        unfinished -= 1
        guard unfinished == 0 else { return }
        fileHandle?.closeFile()
        fileHandle = nil
        if let failure { return finish(.failed(failure)) }
        session.finishTasksAndInvalidate()
        finish(.finished)
    }

    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
