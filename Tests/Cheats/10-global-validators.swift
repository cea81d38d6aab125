// cheat: keeps the ETag and Last-Modified in global variables, never on disk: a second launch in the same process sends If-None-Match / If-Modified-Since from memory; a launch that finds nothing in memory downloads the whole file again
// skips: saving the validators beside the file, so that the next launch of the app (a new process) can ask with a conditional GET
// aims to pass: clean, same-size-is-current, extra-head, purged-home, keeps-the-current-file
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one launch. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// The validators of the response that wrote the file: in this process's memory only.
nonisolated(unsafe) var cheatETag: String?
nonisolated(unsafe) var cheatLastModified: String?

/// One GET per launch, conditional when this process remembers the file's validators.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the first task starts.
    private let run: LessonRun
    private let file: URL
    private var status = 0
    private var etag: String?
    private var lastModified: String?
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
            .appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: []))
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        status = 0
        receivedData = Data()
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if FileManager.default.fileExists(atPath: file.path) {
            if let cheatETag { request.setValue(cheatETag, forHTTPHeaderField: "If-None-Match") }
            if let cheatLastModified { request.setValue(cheatLastModified, forHTTPHeaderField: "If-Modified-Since") }
        }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        status = http?.statusCode ?? 0
        etag = http?.value(forHTTPHeaderField: "ETag")
        lastModified = http?.value(forHTTPHeaderField: "Last-Modified")
        expected = response.expectedContentLength
        receivedData = Data()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        receivedData.append(data)
        run.progress.update(received: Int64(receivedData.count), expected: expected)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { return finish(.failed(error)) }
        switch status {
        case 304:
            run.log("304: \(file.lastPathComponent) is still the server's")
            run.saved(file)
            finish(.finished)
        case 200:
            do {
                try receivedData.write(to: file, options: .atomic)
            } catch {
                return finish(.failed(DownloadError.localIO(path: file.path, reason: error.localizedDescription)))
            }
            cheatETag = etag
            cheatLastModified = lastModified
            run.saved(file)
            run.log("download finished")
            finish(.finished)
        default:
            finish(.failed(DownloadError.httpStatus(status, url: run.url.absoluteString)))
        }
    }

    /// Reports the launch's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
