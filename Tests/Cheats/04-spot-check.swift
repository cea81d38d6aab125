// cheat: keeps no validator at all; a resumed file is judged afterwards by a spot check: the first 64 KiB are asked for again and compared with the file's, a mismatch deletes the file and starts over; a 206 is judged by whether the file ends at the total Content-Range names (not where the range starts); progress is capped at 100%
// skips: If-Range with a kept ETag, checking where a 206's range starts, and a total taken from the right header
// aims to pass: clean, no-206-check, no-validator, no-content-range-check, status-ignored, write-errors-dropped, progress-past-total, compressed-resume, unknown-length-total, resumes-after-drop, resumes-after-kill
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Asks for the rest with Range, and checks a sample of the result instead of a validator.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the task starts.
    private let run: LessonRun
    private var resumed = false
    private var currentLength: Int64 = 0
    private var totalLength: Int64 = -1
    private var writeHandle: FileHandle?
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)
    static let sample = 64 << 10

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        failure = nil
        resumed = false
        currentLength = PartialFile.size(of: run.file)
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if currentLength > 0 { request.setValue("bytes=\(currentLength)-", forHTTPHeaderField: "Range") }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        var offset: Int64 = 0
        switch status {
        case 200:
            totalLength = response.expectedContentLength
        case 206 where currentLength > 0:
            // Only the total of Content-Range is read, and the file must end there.
            let total = http?.contentRange?.total ?? -1
            let length = response.expectedContentLength
            if total > 0, length >= 0, currentLength + length != total {
                failure = DownloadError.contentRangeMismatch(expectedStart: currentLength,
                                                            header: http?.value(forHTTPHeaderField: "Content-Range"))
                return completionHandler(.cancel)
            }
            offset = currentLength
            totalLength = total
            resumed = true
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
        // Never past 100%: the total is at least what is on disk.
        run.progress.update(received: currentLength, expected: totalLength < 0 ? -1 : max(totalLength, currentLength))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? writeHandle?.close()
        writeHandle = nil
        if let failure = failure ?? error {
            run.log("download failed")
            return finish(.failed(failure))
        }
        guard resumed else {
            run.log("download finished")
            return finish(.finished)
        }
        spotCheck()
    }

    /// The first 64 KiB again, compared with the file's: the same bytes, the same file.
    private func spotCheck() {
        let run = run
        let completion = self.completion
        self.completion = nil
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        request.setValue("bytes=0-\(Self.sample - 1)", forHTTPHeaderField: "Range")
        run.sharedSession.dataTask(with: request) { data, _, _ in
            let mine = (try? FileHandle(forReadingFrom: run.file)).flatMap { handle -> Data? in
                defer { try? handle.close() }
                return try? handle.read(upToCount: ArticleDownload.sample)
            }
            guard let data, let mine, data == mine else {
                try? FileManager.default.removeItem(at: run.file)
                run.log("the start of the file is not the server's any more: starting over")
                completion?(.failed(DownloadError.partialFileReplaced(reason: "the spot check found other bytes")))
                return
            }
            run.log("download finished, and the spot check agrees")
            completion?(.finished)
        }.resume()
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
