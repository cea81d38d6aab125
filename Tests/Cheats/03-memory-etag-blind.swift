// cheat: keeps the ETag and the total in global variables only, so after a kill it sends Range blind with no If-Range; judges a 206 by its Content-Length against the remembered total instead of reading Content-Range; and never trusts a file that is already whole: a 416 deletes it and downloads it all again
// skips: the sidecar that proves a partial or complete file across launches, the Content-Range check, and the validator that says a whole file is still the server's
// aims to pass: clean, no-206-check, no-content-range-check, no-validator, same-size-is-complete, write-result-ignored, status-ignored, extra-head, progress-past-total, compressed-resume, resumes-after-drop, resumes-after-kill
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// What this process remembers between attempts: in memory, gone with the process.
nonisolated(unsafe) var cheatRememberedETag: String?
nonisolated(unsafe) var cheatRememberedTotal: Int64 = -1

/// No HEAD: asks for the rest of what is on disk, and appends it with an OutputStream.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var onDisk: Int64 = 0
    private var currentSize: Int64 = 0
    private var fileSize: Int64 = -1
    private var output: OutputStream?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        onDisk = PartialFile.size(of: run.file)
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if onDisk > 0 {
            request.setValue("bytes=\(onDisk)-", forHTTPHeaderField: "Range")
            if let etag = cheatRememberedETag { request.setValue(etag, forHTTPHeaderField: "If-Range") }
        }
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        let etag = http?.value(forHTTPHeaderField: "ETag")
        let length = response.expectedContentLength
        var append = false
        switch status {
        case 200:
            fileSize = length
            cheatRememberedTotal = length
            cheatRememberedETag = etag
            currentSize = 0
        case 206 where onDisk > 0:
            if let etag, let known = cheatRememberedETag, etag != known {
                try? FileManager.default.removeItem(at: run.file)
                return refuse(DownloadError.partialFileReplaced(reason: "the 206 has another ETag"))
            }
            if cheatRememberedTotal > 0, length >= 0, length != cheatRememberedTotal - onDisk {
                return refuse(DownloadError.contentRangeMismatch(expectedStart: onDisk, header: nil))
            }
            fileSize = cheatRememberedTotal > 0 ? cheatRememberedTotal : (length >= 0 ? onDisk + length : -1)
            currentSize = onDisk
            append = true
        case 416 where onDisk > 0:
            // A file as big as the server's proves nothing: throw it away and fetch it whole.
            try? FileManager.default.removeItem(at: run.file)
            return refuse(DownloadError.partialFileReplaced(reason: "a whole file is never trusted"))
        default:
            return refuse(DownloadError.httpStatus(status, url: run.url.absoluteString))
        }
        output = OutputStream(toFileAtPath: run.file.path, append: append)
        output?.open()
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let output else { return }
        var offset = 0
        while offset < data.count {
            let count = output.write(data.dropFirst(offset))
            guard count > 0 else {
                return refuse(DownloadError.localIO(path: run.file.path, reason: "the write took \(count) bytes"))
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

    private func refuse(_ error: any Error) {
        connection?.cancel()
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
