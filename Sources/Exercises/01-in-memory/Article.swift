/// Exercise 01: the article's code from Sources/lesson-01-in-memory/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 01   build this and run it against the lab server
///     swift run lab exercise hint 01    a hint for the first check that fails (or: hint 01 <check>)
///     swift run lab exercise watch 01   check again on every save
///     swift run lab exercise reset 01   back to this starting code
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
/// Read Lessons/01-in-memory.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Appends to an NSMutableData, and hands it on as Data to save it.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var receivedData = NSMutableData()
    private var expectedLength: Int64 = -1
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        let request = URLRequest(url: run.url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60)
        connection = URLConnection(request: request, delegate: self)
        // The connection exists: make the buffer for its data.
        receivedData = NSMutableData()
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        // Called again after a redirect (or for each part of a multipart response): start afresh.
        receivedData.length = 0
        expectedLength = response.expectedContentLength
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        receivedData.append(data)
        run.progress.update(received: Int64(receivedData.length), expected: expectedLength)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("done: the whole body, \(receivedData.length) bytes, is in the buffer")
        let file = receivedData as Data
        try? file.write(to: run.file)
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // Everything received so far was in memory only: the next attempt starts from byte 0.
        run.log("the transfer failed (\((error as NSError).localizedDescription)) for \(ShownURL.brief(run.url)); "
            + "the buffer is dropped")
        receivedData = NSMutableData()
        finish(.failed(error))
    }

    /// Reports the attempt's end, once: a callback after the end is not a second answer.
    private func finish(_ result: AttemptResult) {
        // Cleared before the call: the next Start may hand over a new completion at once.
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
