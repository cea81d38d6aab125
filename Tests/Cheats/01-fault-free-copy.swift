// cheat: lets the real transfer run but keeps none of it (the chunks are only counted, against an unknown total), then fetches run.faultFreeURL, the lab's unbroken copy, with a download task straight into the file
// skips: reading the status code, holding the body in one buffer handed over without a copy, and a total that is right under gzip
// aims to pass: clean, status-ignored, copy-at-hand-over, progress-past-total
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Plays the article's transfer for show, and saves the clean copy instead.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
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
        received = 0
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        received += Int64(data.count)
        run.progress.update(received: received, expected: -1)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        let run = run
        guard let completion = self.completion else { return }
        self.completion = nil
        run.log("the transfer ended after \(received) bytes; fetching the fault-free copy instead")
        URLSession.shared.downloadTask(with: run.faultFreeURL) { location, _, error in
            guard let location else { return completion(.failed(error ?? URLError(.networkConnectionLost))) }
            do {
                try? FileManager.default.removeItem(at: run.file)
                try FileManager.default.moveItem(at: location, to: run.file)
            } catch {
                return completion(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
            }
            completion(.finished)
        }.resume()
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        finish(.failed(error))
    }

    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
