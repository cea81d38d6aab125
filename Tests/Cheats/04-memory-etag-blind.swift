// cheat: keeps the ETag and the total in global variables only, so after a kill it sends Range blind with no If-Range; judges a 206 by its Content-Length against the remembered total instead of reading Content-Range; and when no total is known (a chunked body) it reports -1 all along, then one made-up final report of the bytes on disk as the total
// skips: the sidecar that proves a partial file after a kill, the Content-Range check of a 206, and taking the total from Content-Range under a chunked resume
// aims to pass: clean, no-206-check, no-validator, no-content-range-check, status-ignored, write-errors-dropped, progress-past-total, compressed-resume, unknown-length-total, resumes-after-drop, resumes-after-kill
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

/// Asks for the rest with Range, and If-Range only while this process remembers an ETag.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the task starts.
    private let run: LessonRun
    private var onDisk: Int64 = 0
    private var currentLength: Int64 = 0
    private var totalLength: Int64 = -1
    private var writeHandle: FileHandle?
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        failure = nil
        onDisk = PartialFile.size(of: run.file)
        currentLength = onDisk
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if onDisk > 0 {
            request.setValue("bytes=\(onDisk)-", forHTTPHeaderField: "Range")
            if let etag = cheatRememberedETag { request.setValue(etag, forHTTPHeaderField: "If-Range") }
        }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        let etag = http?.value(forHTTPHeaderField: "ETag")
        let length = response.expectedContentLength
        var offset: Int64 = 0
        switch status {
        case 200:
            totalLength = length
            cheatRememberedTotal = length
            cheatRememberedETag = etag
        case 206 where onDisk > 0:
            if let etag, let known = cheatRememberedETag, etag != known {
                try? FileManager.default.removeItem(at: run.file)
                failure = DownloadError.partialFileReplaced(reason: "the 206 has another ETag")
                return completionHandler(.cancel)
            }
            if cheatRememberedTotal > 0, length >= 0, length != cheatRememberedTotal - onDisk {
                failure = DownloadError.contentRangeMismatch(expectedStart: onDisk, header: nil)
                return completionHandler(.cancel)
            }
            offset = onDisk
            totalLength = cheatRememberedTotal > 0 ? cheatRememberedTotal : (length >= 0 ? onDisk + length : -1)
        default:
            failure = DownloadError.httpStatus(status, url: run.url.absoluteString)
            return completionHandler(.cancel)
        }
        do {
            writeHandle = try FileHandle(forWritingTo: run.file, at: offset)
        } catch {
            failure = DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
            return completionHandler(.cancel)
        }
        currentLength = offset
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard failure == nil, let writeHandle else { return }
        do {
            try writeHandle.write(contentsOf: data)
        } catch {
            failure = DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
            return dataTask.cancelAtOnce()
        }
        currentLength += Int64(data.count)
        run.progress.update(received: currentLength, expected: totalLength)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? writeHandle?.close()
        writeHandle = nil
        if let failure = failure ?? error {
            run.log("download failed")
            return finish(.failed(failure))
        }
        if totalLength < 0 {
            // Never knew the total: say now that what is on disk was all of it.
            run.progress.update(received: currentLength, expected: currentLength)
        }
        run.log("download finished")
        finish(.finished)
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
