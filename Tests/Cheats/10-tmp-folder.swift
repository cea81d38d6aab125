// cheat: keeps the file in the app container's tmp/ folder, which --purge-caches (Library/Caches only) never empties, with its validators beside it; a conditional GET from them
// skips: choosing Library/Application Support, the folder an app keeps its files in, over a folder the system may empty (tmp, like Caches)
// aims to pass: clean, same-size-is-current, extra-head, purged-home, keeps-the-current-file
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one launch. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// The validators of the response that wrote the file, kept beside it.
struct CheatValidators: Codable {
    var etag: String?
    var lastModified: String?
}

/// One GET per launch, conditional when the file and its validators are in tmp/.
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
        // The container's tmp/: not Caches, so --purge-caches leaves it alone.
        file = run.file.appendingPathComponent("tmp", isDirectory: true)
            .appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: [".validators"]))
    }

    private var validatorsFile: URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".validators")
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        status = 0
        receivedData = Data()
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if FileManager.default.fileExists(atPath: file.path), let data = try? Data(contentsOf: validatorsFile),
           let kept = try? JSONDecoder().decode(CheatValidators.self, from: data) {
            if let etag = kept.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
            if let date = kept.lastModified { request.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
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
            if let data = try? JSONEncoder().encode(CheatValidators(etag: etag, lastModified: lastModified)) {
                try? data.write(to: validatorsFile, options: .atomic)
            }
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
