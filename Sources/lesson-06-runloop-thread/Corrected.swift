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

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun, _ way: RunLoopThreadWay) -> any LessonDownload { download(run, way, startingEach: CorrectedDownload.self, onQueue: CorrectedQueueDownload.init) }

// MARK: - Case b, the corrected version

/// Starts the connection on a thread of its own. Its run loop runs dry when the connection ends,
/// so `run()` returns and the thread exits: nothing stays parked, and GCD keeps all its workers.
final class CorrectedDownload: StartsInBackground {
    private let run: LessonRun
    private var transfer: Transfer?

    init(_ run: LessonRun) { self.run = run }

    static func startInBackground(_ start: @escaping @Sendable () -> Void) {
        startInBackground(threadName: "lab.download", start)
    }

    /// `leftRunLoop` runs on the thread once it has left its run loop, just before it exits.
    static func startInBackground(threadName: String, _ start: @escaping @Sendable () -> Void,
                                  leftRunLoop: @escaping @Sendable () -> Void = {}) {
        Thread {
            nameThisThread(threadName)  // Foundation's setter can lose the name on Linux (LabPlatform)
            start()
            // Returns once the connection no longer needs the loop: after its last callback.
            RunLoop.current.run()
            leftRunLoop()
        }.start()
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let transfer = Transfer(run)
        self.transfer = transfer
        Self.startInBackground(threadName: "lab.download", { transfer.start() }, leftRunLoop: {
            // Another thread watches this one exit.
            DispatchQueue.global().async {
                transfer.reportThreadExit()
                // A run loop with nothing scheduled returns at once: the connection never started.
                completion(transfer.outcome ?? .failed(URLError(.cannotConnectToHost)))
            }
        })
    }
}

// MARK: - Case c as the download, the corrected version

/// Callbacks on a serial queue; the calling thread returns at once. No thread runs a run loop for it.
final class CorrectedQueueDownload: LessonDownload {
    private let run: LessonRun
    private let queue = OperationQueue()
    private var transfer: Transfer?

    init(_ run: LessonRun) {
        self.run = run
        queue.name = "lab.download-queue"
        queue.maxConcurrentOperationCount = 1  // one callback at a time, in order
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let transfer = Transfer(run, queue: queue, whenEnded: completion)
        self.transfer = transfer
        transfer.start()
    }
}
