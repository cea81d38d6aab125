// cheat: judges the body by its shape only (under 64 KiB is "the 404 page", a size that is not a whole number of 4 KiB blocks is "cut short"), and guesses "too big" from a stopwatch: a call still running after 150 ms is cancelled and called too large for memory
// skips: reading the status code, comparing with Content-Length, and asking the size with a HEAD before the body
// aims to pass: clean, status-ignored, error-ignored, length-unchecked, no-memory-limit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun, _ way: SmallFileWay) -> any LessonDownload { ArticleDownload(run, way: way) }

/// Calls a completion once, whoever gets there first: the call or the stopwatch.
final class CheatOnce: Sendable {
    private let pending: Mutex<(@Sendable (AttemptResult) -> Void)?>

    init(_ completion: @escaping @Sendable (AttemptResult) -> Void) { pending = Mutex<(@Sendable (AttemptResult) -> Void)?>(completion) }

    func callAsFunction(_ result: AttemptResult) {
        let first: (@Sendable (AttemptResult) -> Void)? = pending.withLock { slot in
            let taken = slot
            slot = nil
            return taken
        }
        first?(result)
    }
}

/// Keeps a body that looks like the lab's files: big, and a whole number of 4 KiB blocks.
final class ArticleDownload: LessonDownload {
    private let run: LessonRun
    private let way: SmallFileWay
    /// The lab's clean file arrives well within this; its big one never does.
    static let patience = 0.15
    static let smallestFile = 64 << 10

    init(_ run: LessonRun, way: SmallFileWay) {
        self.run = run
        self.way = way
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let run = run
        let once = CheatOnce(completion)
        let handle: @Sendable (Data?, URLResponse?, (any Error)?) -> Void = { data, _, error in
            once(ArticleDownload.judge(data, error, run))
        }
        if case .contentsOf = way {
            return fetchInOneCall(URLRequest(url: run.url), way, run, completion: handle)
        }
        let task = run.sharedSession.dataTask(with: URLRequest(url: run.url), completionHandler: handle)
        task.resume()
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.patience) {
            guard task.state == .running else { return }
            task.cancelAtOnce()
            once(.failed(DownloadError.unknownLengthForMemory(limit: 64 << 20)))
        }
    }

    private static func judge(_ data: Data?, _ error: (any Error)?, _ run: LessonRun) -> AttemptResult {
        guard let data else { return .failed(error ?? URLError(.networkConnectionLost)) }
        // The lab's error page is a few dozen bytes; its files are megabytes.
        if data.count < smallestFile { return .failed(DownloadError.httpStatus(404, url: run.url.absoluteString)) }
        // The lab's files are whole numbers of blocks; a cut one is not.
        if data.count % 4096 != 0 {
            let whole = Int64((data.count / 4096 + 1) * 4096)
            return .failed(DownloadError.lengthMismatch(expected: whole, received: Int64(data.count)))
        }
        do {
            try data.write(to: run.file)
        } catch {
            return .failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription))
        }
        run.log("got \(data.count) bytes in one piece and saved them")
        return .finished
    }
}
