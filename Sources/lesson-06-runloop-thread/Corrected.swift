/// Lesson 06, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/06-runloop-thread.md explains each fix.
import CoreFoundation
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

// MARK: - Case b, the corrected version

/// Starts the connection on a thread of its own. Its run loop runs dry when the connection ends,
/// so `run()` returns and the thread exits: nothing stays parked, and GCD keeps all its workers.
final class CorrectedDownload: StartsInBackground {
    private let run: LessonRun

    init(_ run: LessonRun) { self.run = run }

    static func startInBackground(_ start: @escaping @Sendable () -> Void) {
        _ = startInBackground(threadName: "lab.download", start)
    }

    /// Returns a semaphore that is signalled when the thread has left its run loop.
    static func startInBackground(threadName: String, _ start: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let leftRunLoop = DispatchSemaphore(value: 0)
        Thread {
            nameThisThread(threadName)
            start()
            // Returns once the connection no longer needs the loop: after its last callback.
            RunLoop.current.run()
            leftRunLoop.signal()
        }.start()
        return leftRunLoop
    }

    func downloadFile() -> AttemptResult {
        let transfer = Transfer(run)
        let leftRunLoop = Self.startInBackground(threadName: "lab.download") { transfer.start() }
        transfer.ended.wait()
        leftRunLoop.wait()
        run.log("case b: thread \(transfer.threads.joined(separator: ", ")) left its run loop "
            + "(\(ThreadCensus.exited(transfer.threadIDs) ? "and exited" : "but is still running"))")
        return transfer.outcome!
    }
}

// MARK: - Case c as the download, the corrected version

/// Callbacks on a serial queue; the calling thread only waits. No thread runs a run loop for it.
final class CorrectedQueueDownload: LessonDownload {
    private let run: LessonRun
    private let queue = OperationQueue()

    init(_ run: LessonRun) {
        self.run = run
        queue.name = "lab.download-queue"
        queue.maxConcurrentOperationCount = 1  // one callback at a time, in order
    }

    func downloadFile() -> AttemptResult {
        let transfer = Transfer(run, queue: queue)
        transfer.start()
        transfer.ended.wait()
        return transfer.outcome!
    }
}
