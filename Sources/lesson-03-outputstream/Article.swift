/// Lesson 03, the article's variant: the strategy as the article writes it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/03-outputstream.md explains it.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Asks the server for the total with HEAD, reads the local size, and appends whatever arrives.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var fileSize: Int64 = 0     // the whole file, as the HEAD request reported it
    private var currentSize: Int64 = 0  // how much is on disk
    private var output: OutputStream?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        getServerFileSize()
        getLocalFileSize()

        // Defect: equal sizes are taken to mean "complete". Nothing checks that the bytes on
        // disk belong to the file the server has now.
        if currentSize == fileSize {
            run.log("the file is already downloaded; not downloading it again")
            return finish(.finished)
        }
        // A local file larger than the server's must be broken: delete it and start over.
        if currentSize > fileSize {
            try? FileManager.default.removeItem(at: run.file)
            currentSize = 0
        }

        var request = URLRequest(url: run.url)
        // Defect: URLSession adds Accept-Encoding: gzip, and a server that compresses ignores the
        // Range; its HEAD gave the compressed size, so the partial file looks too large as well.
        request.setValue("bytes=\(currentSize)-", forHTTPHeaderField: "Range")
        // Callbacks arrive on the run loop of the thread that starts the connection, as it runs.
        connection = URLConnection(request: request, delegate: self)
    }

    /// Defect: an extra round trip on every start, although a 206's Content-Range carries the total.
    private func getServerFileSize() {
        var request = URLRequest(url: run.url)
        request.httpMethod = "HEAD"
        // Like the article, ignore any error: the size is then unknown (-1).
        let response = try? URLConnection.sendSynchronousRequest(request).response
        // Defect: under gzip this is the compressed size; the bytes that arrive are decoded, so
        // progress passes 100%.
        fileSize = response?.expectedContentLength ?? -1
    }

    private func getLocalFileSize() {
        let attributes = try? FileManager.default.attributesOfItem(atPath: run.file.path)
        currentSize = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        // Defect: no look at the status. A 200 carrying the whole file (Range ignored), or a 206
        // of a file that has changed, is appended after the bytes already on disk.
        output = OutputStream(toFileAtPath: run.file.path, append: true)
        output?.open()
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        currentSize += Int64(data.count)
        run.progress.update(received: currentSize, expected: fileSize)
        // Defect: the number of bytes actually written is ignored.
        _ = output?.write(data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        output?.close()
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed, please download again")
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
