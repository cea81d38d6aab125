/// Lesson 01, the article's variant: the strategy as the article writes it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/01-in-memory.md explains it.
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
        // Defect: no look at the status, so a 404's error page becomes the data.
        receivedData.length = 0
        // Defect: under gzip, expectedContentLength is the compressed size, while the bytes that
        // arrive are decoded: progress passes 100%.
        expectedLength = response.expectedContentLength
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        // Weakness: the buffer grows chunk by chunk, with no idea of the size to come.
        receivedData.append(data)
        run.progress.update(received: Int64(receivedData.length), expected: expectedLength)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("done: the whole body, \(receivedData.length) bytes, is in the buffer")
        // Defect: handing a mutable NSData on as Swift Data copies it. For a moment the
        // whole body is in memory twice.
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
