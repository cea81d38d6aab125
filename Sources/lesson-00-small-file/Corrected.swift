/// Lesson 00, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/00-small-file.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

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

    func downloadFile() -> AttemptResult {
        // A completion handler sees the response only together with the whole body, so the size
        // must be known before asking for the body: HEAD costs one round trip and no body.
        var head = URLRequest(url: run.url)
        head.httpMethod = "HEAD"
        // The length of the file as it is, not of a compressed copy: a HEAD that accepts gzip is
        // told the compressed size, and the body arrives decoded, several times larger.
        head.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let (_, headResponse, headError) = run.waitForCompletion { done in
            run.sharedSession.dataTask(with: head) { data, response, error in done((data, response, error)) }.resume()
        }
        if let headError { return .failed(headError) }
        guard let headResponse = headResponse as? HTTPURLResponse, headResponse.statusCode == 200 else {
            // After a redirect the answer is another URL's: the error names that one.
            return .failed(DownloadError.httpStatus((headResponse as? HTTPURLResponse)?.statusCode ?? 0,
                                                    url: (headResponse?.url ?? run.url).absoluteString))
        }
        let expected = headResponse.expectedDecodedLength
        if expected > Self.inMemoryLimit {
            return .failed(DownloadError.tooLargeForMemory(bytes: expected, limit: Self.inMemoryLimit))
        }
        // No Content-Length (a chunked body): nothing bounds what one call would hold.
        if expected < 0 {
            return .failed(DownloadError.unknownLengthForMemory(limit: Self.inMemoryLimit))
        }

        let (data, response, error) = fetchInOneCall(URLRequest(url: run.url), way, run)
        if let error { return .failed(error) }
        // Data(contentsOf:) hands back no response; a data task's must say 200.
        if let response = response as? HTTPURLResponse, response.statusCode != 200 {
            return .failed(DownloadError.httpStatus(response.statusCode, url: (response.url ?? run.url).absoluteString))
        }
        guard let data else { return .failed(URLError(.zeroByteResource)) }
        // Compressed or not, the decoded body is the file: its length is the HEAD's.
        if Int64(data.count) != expected {
            return .failed(DownloadError.lengthMismatch(expected: expected, received: Int64(data.count)))
        }
        do {
            try data.write(to: run.file)
        } catch {
            return .failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription))
        }
        run.log("got \(data.count) bytes in one piece, as announced, and saved them")
        return .finished
    }
}
