/// Lesson 00, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/00-small-file.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun, _ way: SmallFileWay) -> any LessonDownload { CorrectedDownload(run, way: way) }

/// Asks for the size first, refuses what is too big to hold in memory, and checks the error, the
/// status and the length before saving anything.
final class CorrectedDownload: LessonDownload {
    /// Past this size a body belongs in a file as it arrives (lessons 02 to 04), not in memory.
    static let inMemoryLimit: Int64 = 64 << 20
    private let run: LessonRun
    private let way: SmallFileWay

    init(_ run: LessonRun, way: SmallFileWay) {
        self.run = run
        self.way = way
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        // A completion handler sees the response only together with the whole body, so the size
        // must be known before asking for the body: HEAD costs one round trip and no body.
        var head = URLRequest(url: run.url)
        head.httpMethod = "HEAD"
        // The length of the file as it is, not of a compressed copy: a HEAD that accepts gzip is
        // told the compressed size, and the body arrives decoded, several times larger.
        head.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let (run, way) = (run, way)
        run.sharedSession.dataTask(with: head) { _, response, error in
            switch Self.sizeToFetch(from: response, error, run) {
            case .failure(let reason): completion(.failed(reason))
            case .success(let expected): Self.fetch(expected: expected, way, run, completion: completion)
            }
        }.resume()
    }

    /// The length the HEAD announced, or why the body must not be asked for.
    private static func sizeToFetch(from response: URLResponse?, _ error: (any Error)?, _ run: LessonRun) -> Result<Int64, any Error> {
        if let error { return .failure(error) }
        guard let response = response as? HTTPURLResponse, response.statusCode == 200 else {
            // After a redirect the answer is another URL's: the error names that one.
            return .failure(DownloadError.httpStatus((response as? HTTPURLResponse)?.statusCode ?? 0,
                                                     url: (response?.url ?? run.url).absoluteString))
        }
        // A compressed body's announced length is the compressed size, while the call hands over
        // the decoded bytes, several times as many: then the length is unknown (-1).
        let expected = response.value(forHTTPHeaderField: "Content-Encoding") == nil ? response.expectedContentLength : -1
        if expected > inMemoryLimit {
            return .failure(DownloadError.tooLargeForMemory(bytes: expected, limit: inMemoryLimit))
        }
        // No Content-Length (a chunked body): nothing bounds what one call would hold.
        if expected < 0 {
            return .failure(DownloadError.unknownLengthForMemory(limit: inMemoryLimit))
        }
        return .success(expected)
    }

    /// The body in one call, saved only when it is all of the file.
    private static func fetch(expected: Int64, _ way: SmallFileWay, _ run: LessonRun,
                              completion: @escaping @Sendable (AttemptResult) -> Void) {
        fetchInOneCall(URLRequest(url: run.url), way, run) { data, response, error in
            if let error { return completion(.failed(error)) }
            // Data(contentsOf:) hands back no response; a data task's must say 200.
            if let response = response as? HTTPURLResponse, response.statusCode != 200 {
                return completion(.failed(DownloadError.httpStatus(response.statusCode,
                                                                   url: (response.url ?? run.url).absoluteString)))
            }
            guard let data else { return completion(.failed(URLError(.zeroByteResource))) }
            // Compressed or not, the decoded body is the file: its length is the HEAD's.
            if Int64(data.count) != expected {
                return completion(.failed(DownloadError.lengthMismatch(expected: expected, received: Int64(data.count))))
            }
            do {
                try data.write(to: run.file)
            } catch {
                return completion(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
            }
            run.log("got \(data.count) bytes in one piece, as announced, and saved them")
            completion(.finished)
        }
    }
}
