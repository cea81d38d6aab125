// cheat: keeps no validators at all: the file's own modification date is set to the server's Last-Modified, and the next launch sends If-Modified-Since from the file's date, as wget -N does; the ETag is never kept or sent; the file goes in Documents
// skips: keeping the ETag (a strong validator) and Last-Modified beside the file, sending If-None-Match, and the Application Support folder
// aims to pass: clean, same-size-is-current, extra-head, purged-home, keeps-the-current-file
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one launch. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// HTTP dates, as Last-Modified and If-Modified-Since write them.
enum CheatHTTPDate {
    static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }

    static func date(_ text: String) -> Date? { formatter().date(from: text) }
    static func text(_ date: Date) -> String { formatter().string(from: date) }
}

/// One GET per launch, conditional on the file's own modification date.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the first task starts.
    private let run: LessonRun
    private let file: URL
    private var status = 0
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
        file = run.containerURL(for: .documentDirectory)
            .appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: []))
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        status = 0
        receivedData = Data()
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
           let date = attributes[.modificationDate] as? Date {
            request.setValue(CheatHTTPDate.text(date), forHTTPHeaderField: "If-Modified-Since")
        }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        status = http?.statusCode ?? 0
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
            run.log("304: not modified since the file's own date")
            run.saved(file)
            finish(.finished)
        case 200:
            do {
                try receivedData.write(to: file, options: .atomic)
            } catch {
                return finish(.failed(DownloadError.localIO(path: file.path, reason: error.localizedDescription)))
            }
            // The server's date becomes the file's: that is all the next launch will know.
            let date = lastModified.flatMap(CheatHTTPDate.date) ?? Date()
            try? FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: file.path)
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
