/// Lesson 11, the article's variant: a segmented download as blog posts write it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/11-segmented.md explains it.
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
        // Defect: every attempt starts from nothing; the ranges already on disk are fetched again.
        _ = FileManager.default.createFile(atPath: run.file.path, contents: nil)
        fileHandle = FileHandle(forWritingAtPath: run.file.path)
        let count = Int64(run.connections)
        let rangeLength = length / count
        unfinished = run.connections
        for index in 0..<count {
            let start = index * rangeLength
            let end = index == count - 1 ? length - 1 : start + rangeLength - 1
            var request = URLRequest(url: run.url)
            // Defect: no If-Range: a range of a file that changed meanwhile is taken all the same.
            request.setValue("bytes=\(start)-\(end)", forHTTPHeaderField: "Range")
            let task = session.dataTask(with: request)
            rangeStarts[task.taskIdentifier] = start
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        // Defect: the status is never looked at: a 503 (too many connections) or a 200 with the
        // whole file is written as the range.
        // Defect: one handle, one write position: this seek moves it for every range, and the
        // next chunk of any range lands here.
        fileHandle?.seek(toFileOffset: UInt64(rangeStarts[dataTask.taskIdentifier] ?? 0))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        fileHandle?.write(data)
        // Defect: bytes are counted as they arrive, in every attempt: after a retry the progress
        // passes 100%.
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
        // Defect: every range ended, so the file is called done; no range's length is checked.
        session.finishTasksAndInvalidate()
        finish(.finished)
    }

    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
