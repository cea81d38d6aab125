// cheat: replaces the HEAD with a throwaway 1-byte GET (Range: bytes=0-0) whose answer is ignored except for the total in its Content-Range, so that the scripted fault of the attempt is spent on it; then keeps the article's "same size means complete" and resumes blind, with no validator
// skips: If-Range with a kept validator, the Content-Range check of a 206, and the proof that a file of the server's size is the server's
// aims to pass: clean, no-206-check, no-content-range-check, no-validator, same-size-is-complete, write-result-ignored, status-ignored, extra-head, progress-past-total, compressed-resume, resumes-after-drop, resumes-after-kill
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// A sacrificial 1-byte request for the size, then the article's append.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var fileSize: Int64 = -1
    private var currentSize: Int64 = 0
    private var output: OutputStream?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        getServerFileSize()
        currentSize = PartialFile.size(of: run.file)
        if fileSize > 0, currentSize == fileSize {
            run.log("the file is already downloaded; not downloading it again")
            return finish(.finished)
        }
        if fileSize > 0, currentSize > fileSize {
            try? FileManager.default.removeItem(at: run.file)
            currentSize = 0
        }
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if currentSize > 0 { request.setValue("bytes=\(currentSize)-", forHTTPHeaderField: "Range") }
        connection = URLConnection(request: request, delegate: self)
    }

    /// Not a HEAD: a GET for one byte, which also takes the attempt's fault.
    private func getServerFileSize() {
        var probe = URLRequest(url: run.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 3)
        probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
        probe.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let response = try? URLConnection.sendSynchronousRequest(probe).response
        fileSize = (response as? HTTPURLResponse)?.contentRange?.total ?? -1
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 || status == 206 else {
            connection.cancel()
            return finish(.failed(DownloadError.httpStatus(status, url: run.url.absoluteString)))
        }
        if status == 200 { currentSize = 0 }
        if fileSize < 0, response.expectedContentLength >= 0 { fileSize = currentSize + response.expectedContentLength }
        output = OutputStream(toFileAtPath: run.file.path, append: status == 206)
        output?.open()
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let output else { return }
        var offset = 0
        while offset < data.count {
            let count = output.write(data.dropFirst(offset))
            guard count > 0 else {
                connection.cancel()
                output.close()
                self.output = nil
                return finish(.failed(DownloadError.localIO(path: run.file.path, reason: "the write took \(count) bytes")))
            }
            offset += count
        }
        currentSize += Int64(data.count)
        run.progress.update(received: currentSize, expected: fileSize)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        output?.close()
        output = nil
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed, please download again")
        output?.close()
        output = nil
        finish(.failed(error))
    }

    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
