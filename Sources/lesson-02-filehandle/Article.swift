/// Lesson 02, the article's variant: the strategy as the article writes it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/02-filehandle.md explains it.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Reads the local size, asks for the rest, and writes whatever arrives at the end of the file.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var totalDataSize: Int64 = 0  // the whole file, as worked out from the first response
    private var curDataLength: Int64 = 0  // how much has been downloaded
    // Created on first use and never reset: after close() a second download in this process
    // would write to a closed handle.
    private lazy var fileHandle = FileHandle(forWritingAtPath: run.file.path)
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        let attributes = try? FileManager.default.attributesOfItem(atPath: run.file.path)
        // Weakness: the size goes through a 32-bit int (Objective-C's intValue); past 2 GiB it wraps.
        let localSize = Int64((attributes?[.size] as? NSNumber)?.int32Value ?? 0)
        curDataLength = localSize

        var request = URLRequest(url: run.url)
        // Defect: "bytes:N-" with a colon is not a range servers understand (RFC 9110 wants
        // "bytes=N-"). They ignore it and send the whole file with 200.
        // Defect: URLSession adds Accept-Encoding: gzip, and a server that compresses ignores any
        // Range: the whole file comes again, compressed.
        request.setValue("bytes:\(localSize)-", forHTTPHeaderField: "Range")
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        // As in the listing of "iOS 断点续传", the total is worked out once.
        guard totalDataSize == 0 else { return }
        // Defect: total = this response's length + what is on disk. Under gzip that length is the
        // compressed size and the bytes arrive decoded, so progress passes 100% (as it does when a
        // 200 brings the whole file after a partial one).
        totalDataSize = response.expectedContentLength + curDataLength
        if curDataLength == 0 {
            _ = FileManager.default.createFile(atPath: run.file.path, contents: nil)
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        curDataLength += Int64(data.count)
        run.progress.update(received: curDataLength, expected: totalDataSize)
        // Defect: no look at the status or Content-Range: a 200 carrying the whole file lands
        // after the partial one. Write errors are dropped, as writeData: offers none to check.
        _ = try? fileHandle?.seekToEnd()
        try? fileHandle?.write(contentsOf: data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        try? fileHandle?.close()
        curDataLength = 0
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed")
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
