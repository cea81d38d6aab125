// cheat: never reads a status code or an error: a HEAD's Content-Length and Content-Type are the only truth; a response whose type is text, HTML, JSON or XML is "an error page", and a body is kept only when it has exactly the HEAD's length (a call with no body counts as a broken transfer and is tried again)
// skips: looking at the response's status and at the call's error
// aims to pass: status-ignored, error-ignored, length-unchecked, no-memory-limit, clean
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

/// Whether a response is a page for people rather than the file: its type says so.
func looksLikeAPage(_ response: URLResponse?) -> Bool {
    guard let type = response?.mimeType?.lowercased() else { return false }
    return type.hasPrefix("text/") || type.contains("json") || type.contains("xml") || type.contains("html")
}

/// Saves the body only when it is as long as the HEAD said and not a page.
final class ArticleDownload: LessonDownload {
    private let run: LessonRun
    private let way: SmallFileWay

    init(_ run: LessonRun, way: SmallFileWay) {
        self.run = run
        self.way = way
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let (run, way) = (run, way)
        let url = run.url.absoluteString
        var head = URLRequest(url: run.url)
        head.httpMethod = "HEAD"
        head.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        run.sharedSession.dataTask(with: head) { _, headResponse, _ in
            let announced = headResponse?.expectedContentLength ?? -1
            if looksLikeAPage(headResponse) {
                return completion(.failed(DownloadError.httpStatus(0, url: url)))
            }
            guard announced >= 0 else { return completion(.failed(DownloadError.unknownLengthForMemory(limit: inMemoryLimit))) }
            guard announced <= inMemoryLimit else {
                return completion(.failed(DownloadError.tooLargeForMemory(bytes: announced, limit: inMemoryLimit)))
            }
            fetchInOneCall(URLRequest(url: run.url), way, run) { data, response, _ in
                guard let data else {
                    // Nothing came: the transfer broke somewhere. Another attempt may do better.
                    return completion(.failed(URLError(.networkConnectionLost)))
                }
                if looksLikeAPage(response) {
                    return completion(.failed(DownloadError.httpStatus(0, url: url)))
                }
                guard Int64(data.count) == announced else {
                    return completion(.failed(DownloadError.lengthMismatch(expected: announced, received: Int64(data.count))))
                }
                do {
                    try data.write(to: run.file)
                } catch {
                    return completion(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
                }
                run.log("got \(data.count) bytes in one piece, as long as the HEAD said, and saved them")
                completion(.finished)
            }
        }.resume()
    }
}
