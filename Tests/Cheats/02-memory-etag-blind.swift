// cheat: keeps the ETag and the total in global variables only (nothing beside the file), so after a kill it sends Range blind with no If-Range; never reads Content-Range, and judges a 206 by its Content-Length against the remembered total instead
// skips: the sidecar that proves a partial file after a kill, and the Content-Range check of where a 206 starts
// aims to pass: clean, range-colon, no-206-check, no-content-range-check, no-validator, write-errors-dropped, status-ignored, progress-past-total, compressed-resume, resumes-after-drop, resumes-after-kill
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

/// Reads the local size, asks for the rest, and writes at the end of the file.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var onDisk: Int64 = 0
    private var written: Int64 = 0
    private var total: Int64 = -1
    private var handle: FileHandle?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        onDisk = PartialFile.size(of: run.file)
        written = onDisk
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if onDisk > 0 {
            request.setValue("bytes=\(onDisk)-", forHTTPHeaderField: "Range")
            // Only this process's memory vouches for the bytes on disk; after a kill nothing does.
            if let etag = cheatRememberedETag { request.setValue(etag, forHTTPHeaderField: "If-Range") }
        }
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        let etag = http?.value(forHTTPHeaderField: "ETag")
        let length = response.expectedContentLength
        var offset: Int64 = 0
        switch status {
        case 200:
            total = length
            cheatRememberedTotal = length
            cheatRememberedETag = etag
        case 206 where onDisk > 0:
            if let etag, let known = cheatRememberedETag, etag != known {
                try? FileManager.default.removeItem(at: run.file)
                return refuse(DownloadError.partialFileReplaced(reason: "the 206 has another ETag"))
            }
            // No Content-Range: "the rest" is as long as the total minus what is on disk.
            if cheatRememberedTotal > 0, length >= 0, length != cheatRememberedTotal - onDisk {
                return refuse(DownloadError.contentRangeMismatch(expectedStart: onDisk, header: nil))
            }
            offset = onDisk
            total = cheatRememberedTotal > 0 ? cheatRememberedTotal : (length >= 0 ? onDisk + length : -1)
        default:
            return refuse(DownloadError.httpStatus(status, url: run.url.absoluteString))
        }
        do {
            handle = try FileHandle(forWritingTo: run.file, at: offset)
        } catch {
            return refuse(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription))
        }
        written = offset
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let handle else { return }
        do {
            try handle.write(contentsOf: data)
        } catch {
            return refuse(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription))
        }
        written += Int64(data.count)
        run.progress.update(received: written, expected: total)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        try? handle?.close()
        handle = nil
        run.log("download finished")
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        try? handle?.close()
        handle = nil
        run.log("download failed")
        finish(.failed(error))
    }

    private func refuse(_ error: any Error) {
        connection?.cancel()
        try? handle?.close()
        handle = nil
        finish(.failed(error))
    }

    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
