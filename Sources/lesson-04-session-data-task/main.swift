/// Lesson 04: a URLSession data task with its own data delegate, resumed with Range.
///
/// Follows the NSURLSessionDataTask listing of "iOS 断点续传": the response is allowed with
/// `completionHandler(.allow)`, each chunk arrives in `didReceive data`, and success and failure
/// meet in `didCompleteWithError`, which replaces NSURLConnection's two end callbacks.
///
/// Two Linux facts shape the code: a session's delegate queue has no limit, so the session here
/// gets a bounded, serial one (`BoundedOperationQueue`) and a slow disk slows the sender instead
/// of filling memory; and `countOfBytesReceived` stays 0, so the lesson counts bytes itself.
///
/// `ArticleDownload` keeps the article's logic, defects included. `CorrectedDownload` fixes them.
/// Read Lessons/04-session-data-task.md next to this file.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

Lesson(
    id: "04-session-data-task",
    title: "URLSession data task with a data delegate, resumed with Range",
    defaultSize: 64 << 20,
    defaultFaults: "drop:40pct,ok"  // the first attempt breaks at 40%, the second one behaves
).run { run in
    switch run.variant {
    case .article: ArticleDownload(run)
    case .corrected: CorrectedDownload(run)
    }
}

// MARK: - The article's version

/// Asks for the rest with Range and appends whatever arrives.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile() reads the state only after `done` is signalled.
    private let run: LessonRun
    private var currentLength: Int64 = 0  // bytes on disk, counted here
    private var totalLength: Int64 = 0
    private var writeHandle: FileHandle?
    private var outcome: AttemptResult?
    private let done = DispatchSemaphore(value: 0)
    private lazy var session = run.makeSession(delegate: self, delegateQueue: BoundedOperationQueue(capacity: 64))

    init(_ run: LessonRun) { self.run = run }

    func downloadFile() -> AttemptResult {
        let attributes = try? FileManager.default.attributesOfItem(atPath: run.file.path)
        currentLength = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        var request = URLRequest(url: run.url)
        if currentLength > 0 {
            request.setValue("bytes=\(currentLength)-", forHTTPHeaderField: "Range")
        }
        session.dataTask(with: request).resume()
        done.wait()
        return outcome!
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        // Defect: total = this response's length + what is on disk, and no look at the status
        // or Content-Range. A 200 with the whole file, or a 206 of a file that has changed, is
        // appended after the partial one.
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
            outcome = .failed(error)
        } else {
            run.log("download finished")
            outcome = .finished
        }
        done.signal()
    }
}

// MARK: - The corrected version

/// Writes only bytes that provably continue the partial file. `PartialFile` (LabKit) holds the
/// resume rules shared with lessons 02 and 03: Range + If-Range, and what each answer means.
final class CorrectedDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile() reads the state only after `done` is signalled.
    private let run: LessonRun
    private let partial: PartialFile
    private var fileHandle: FileHandle?
    private var failure: (any Error)?  // a reason of our own to stop, which outranks "cancelled"
    private var outcome: AttemptResult?
    private let done = DispatchSemaphore(value: 0)
    private lazy var session = run.makeSession(delegate: self, delegateQueue: BoundedOperationQueue(capacity: 64))

    init(_ run: LessonRun) {
        self.run = run
        partial = PartialFile(run)
    }

    func downloadFile() -> AttemptResult {
        failure = nil
        session.dataTask(with: partial.nextRequest()).resume()
        done.wait()
        return outcome!
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        switch partial.decide(response) {
        case .append(let offset):
            openFile(writingAt: offset)
        case .replace:
            openFile(writingAt: 0)
        case .complete:
            break  // nothing is missing; the (empty) body is not written anywhere
        case .reject(let error):
            failure = error
        }
        // Refusing the body here is the clean way to stop a data task: no cancel() from inside
        // the delegate queue, where it would wait for that very queue.
        completionHandler(failure == nil ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let fileHandle, failure == nil else { return }
        do {
            try partial.append(data, through: fileHandle)
        } catch {
            failure = error
            // A plain cancel() from this queue would wait for the session's work queue, which waits
            // for this queue; from elsewhere it would land only when the body ends.
            dataTask.cancelAtOnce()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? fileHandle?.close()
        fileHandle = nil
        if let failure {
            outcome = .failed(failure)
        } else if let error {
            // The partial file and its sidecar stay on disk, ready for the next attempt.
            outcome = .failed(error)
        } else {
            partial.finished()
            // A session keeps its delegate alive until it is invalidated.
            session.finishTasksAndInvalidate()
            outcome = .finished
        }
        done.signal()
    }

    /// Opens the file (creating it if need be) with the write position at the checked `offset`;
    /// anything after it is cut off.
    private func openFile(writingAt offset: Int64) {
        do {
            fileHandle = try partial.openForWriting(at: offset)
        } catch {
            failure = error
        }
    }
}
