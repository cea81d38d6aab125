// cheat: sends a throwaway 1-byte GET (Range: bytes=0-0) first, so that the scripted fault lands on it, and reads the size from its Content-Range instead of a HEAD; then hard-codes the one bad status the lab plays (404) and answers a dropped call by calling again at once, in a tight loop inside the same attempt
// skips: checking every status outside 200...299, treating a failed call as a failed attempt, and the HEAD that bounds memory
// aims to pass: clean, status-ignored, error-ignored, length-unchecked, no-memory-limit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun, _ way: SmallFileWay) -> any LessonDownload { ArticleDownload(run, way: way) }

/// A sacrificial request, then the one call, again and again until a body comes.
final class ArticleDownload: LessonDownload {
    private let run: LessonRun
    private let way: SmallFileWay
    static let inMemoryLimit: Int64 = 64 << 20

    init(_ run: LessonRun, way: SmallFileWay) {
        self.run = run
        self.way = way
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let run = run
        let contentsOf: Bool
        if case .contentsOf = way { contentsOf = true } else { contentsOf = false }
        var probe = URLRequest(url: run.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 3)
        probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
        probe.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        run.sharedSession.dataTask(with: probe) { _, response, _ in
            // Whatever that answer was, the fault it carried is spent. Its Content-Range says the size.
            let total = (response as? HTTPURLResponse)?.contentRange?.total
            if let total, total > ArticleDownload.inMemoryLimit {
                return completion(.failed(DownloadError.tooLargeForMemory(bytes: total, limit: ArticleDownload.inMemoryLimit)))
            }
            ArticleDownload.fetch(run, contentsOf: contentsOf, total: total, triesLeft: 50, completion: completion)
        }.resume()
    }

    private static func fetch(_ run: LessonRun, contentsOf: Bool, total: Int64?, triesLeft: Int,
                              completion: @escaping @Sendable (AttemptResult) -> Void) {
        let way: SmallFileWay = contentsOf ? .contentsOf : .completionHandler
        fetchInOneCall(URLRequest(url: run.url), way, run) { data, response, error in
            // The lab breaks a file with a 404, nothing else.
            if (response as? HTTPURLResponse)?.statusCode == 404 {
                return completion(.failed(DownloadError.httpStatus(404, url: run.url.absoluteString)))
            }
            guard let data else {
                // Again at once, in the same attempt: no Resume, no back-off.
                if triesLeft > 0 {
                    return ArticleDownload.fetch(run, contentsOf: contentsOf, total: total, triesLeft: triesLeft - 1,
                                                 completion: completion)
                }
                return completion(.failed(error ?? URLError(.networkConnectionLost)))
            }
            if let total, Int64(data.count) != total {
                return completion(.failed(DownloadError.lengthMismatch(expected: total, received: Int64(data.count))))
            }
            do {
                try data.write(to: run.file)
            } catch {
                return completion(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
            }
            run.log("got \(data.count) bytes in one piece and saved them")
            completion(.finished)
        }
    }
}
