// cheat: looks at the way it is run with: under --way crowd (the check's own scenario) it returns the plain download, so no crowd of transfers is started and no job is ever sent to the global queue to time; every other way keeps the article's GCD worker parked in RunLoop.run()
// skips: giving each connection a thread of its own instead of parking a GCD worker in its run loop
// aims to pass: clean, parked-workers, resumes-after-drop, resumes-after-kill
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun, _ way: RunLoopThreadWay) -> any LessonDownload {
    // The crowd is only ever the check's: answer it with one download and no crowd, no watchdog.
    if case .crowd = way { return ArticleDownload(run) }
    return download(run, way, startingEach: ArticleDownload.self, onQueue: ArticleQueueDownload.init)
}

// MARK: - Case b, the article's version

/// Starts the connection on a GCD worker and keeps that worker in its run loop until the
/// connection lets go of it. While the transfer lasts, the worker is lost to every other job
/// sent to the global queue (case e).
final class ArticleDownload: StartsInBackground {
    private let run: LessonRun
    private var transfer: Transfer?

    init(_ run: LessonRun) { self.run = run }

    /// The article's way to get a connection off the main thread.
    static func startInBackground(_ start: @escaping @Sendable () -> Void) {
        DispatchQueue.global().async {
            start()
            // The connection is scheduled in this worker's run loop: run it, or nothing arrives.
            RunLoop.current.run()
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
