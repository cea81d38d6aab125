// cheat: no HEAD: the one call itself asks for at most the memory limit (Range: bytes=0-<64 MiB - 1>), and the size is read afterwards from the 206's Content-Range total; a file above the limit is refused only after up to 64 MiB of it has been fetched and held
// skips: learning the size with a HEAD before any body is asked for, so that nothing is fetched or held for a file too large for memory
// aims to pass: no-memory-limit, length-unchecked, status-ignored, error-ignored, clean
/// Exercise 00: the article's code from Sources/lesson-00-small-file/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 00   build this and run it against the lab server
///     swift run lab exercise hint 00    a hint for the first check that fails (or: hint 00 <check>)
///     swift run lab exercise watch 00   check again on every save
///     swift run lab exercise reset 00   back to this starting code
///
/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`
/// and the lab gives the lesson's exit status and a one-line message:
///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69
///     .localIO (a write failed: the disk is full)                               exit 74
///     a file called done that is not the server's                               exit 65
///
/// Swift 6 checks data races. A completion handler or a delegate callback runs on another
/// thread, so the compiler refuses a plain `var` that it changes. The lessons keep such state
/// in a Mutex (`import Synchronization`), which locks every read and write:
///     let received = Mutex<Data?>(nil)
///     session.dataTask(with: request) { data, _, _ in received.withLock { $0 = data } }.resume()
///     ... later: let data = received.withLock { $0 }
/// A delegate whose callbacks all run one at a time on its session's serial delegate queue
/// may say so instead: `@unchecked Sendable`, with a comment why (lessons 04 and 05).
///
/// Read Lessons/00-small-file.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun, _ way: SmallFileWay) -> any LessonDownload { ArticleDownload(run, way: way) }

/// The most the app holds in memory.
let inMemoryLimit: Int64 = 64 << 20

/// Asks for no more than fits in memory, and saves it only when it is the whole file.
final class ArticleDownload: LessonDownload {
    private let run: LessonRun
    private let way: SmallFileWay

    init(_ run: LessonRun, way: SmallFileWay) {
        self.run = run
        self.way = way
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let run = run
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        request.setValue("bytes=0-\(inMemoryLimit - 1)", forHTTPHeaderField: "Range")
        // Data(contentsOf:) sends no header of ours: the capped call needs the data task.
        fetchInOneCall(request, .completionHandler, run) { data, response, error in
            if let error { return completion(.failed(error)) }
            let url = run.url.absoluteString
            guard let http = response as? HTTPURLResponse, let data else {
                return completion(.failed(DownloadError.httpStatus(0, url: url)))
            }
            let total: Int64
            switch http.statusCode {
            case 206:
                let header = http.value(forHTTPHeaderField: "Content-Range")
                guard let range = http.contentRange, case .bytes(let first, _, let whole?) = range, first == 0 else {
                    return completion(.failed(DownloadError.contentRangeMismatch(expectedStart: 0, header: header)))
                }
                total = whole
            case 200:
                total = http.expectedContentLength
            default:
                return completion(.failed(DownloadError.httpStatus(http.statusCode, url: url)))
            }
            guard total >= 0 else { return completion(.failed(DownloadError.unknownLengthForMemory(limit: inMemoryLimit))) }
            guard total <= inMemoryLimit else {
                return completion(.failed(DownloadError.tooLargeForMemory(bytes: total, limit: inMemoryLimit)))
            }
            guard Int64(data.count) == total else {
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
