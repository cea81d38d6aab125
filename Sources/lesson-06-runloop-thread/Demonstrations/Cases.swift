import CoreFoundation
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabHarness
import LabKit
import Synchronization

/// Cases a, c, d and e, each on the first 64 KiB of the file. They ask for the fault-free URL, so
/// they neither break nor use up the attempts of the download's fault script.
struct Cases {
    let run: LessonRun
    let slice = 64 << 10

    init(_ run: LessonRun) { self.run = run }

    func show() {
        run.log("The cases, each on the first \(ByteFormat.iec(Int64(slice))) of the file:")
        neverRunsItsRunLoop()
        delegateQueue()
        runLoopModes()
        severalAtOnce()
        let fetched = run.exchangeLog.bodyBytesReceived
        run.log("The cases fetched \(ByteFormat.grouped(fetched)) bytes; the summary leaves them out.")
        run.log("case b: the download itself, "
            + (run.variant == .article ? "on a GCD worker parked in its run loop (the article's way)"
                : "on a thread of its own that runs its run loop until the transfer ends"))
    }

    private var request: URLRequest {
        var request = URLRequest(url: run.faultFreeURL)
        request.setValue("bytes=0-\(slice - 1)", forHTTPHeaderField: "Range")
        return request
    }

    /// (a) The thread starts a connection, then gets on with other work and never runs its run
    /// loop. The connection waits for that run loop: not one callback arrives.
    private func neverRunsItsRunLoop() {
        let deliveries = Deliveries(), request = self.request, run = self.run
        let waitFor = 2.0
        let finished = DispatchSemaphore(value: 0)
        Thread {
            nameThisThread("lab.case-a")
            let connection = URLConnection(request: request, delegate: deliveries)
            Thread.sleep(forTimeInterval: waitFor)  // other work; the run loop never runs
            let arrived = run.exchangeLog.exchanges.last?.bodyBytes ?? 0
            connection.cancel()
            run.log("case a: \(ByteFormat.grouped(Int64(deliveries.bytes))) bytes delivered, "
                + "\(deliveries.callbacks) callbacks in \(seconds(waitFor)); thread \(currentThread()) started the "
                + "connection and never ran its run loop (\(ByteFormat.grouped(arrived)) bytes had reached the "
                + "process and waited for it; cancelled)")
            finished.signal()
        }.start()
        finished.wait()
    }

    /// (c) With a delegate queue the connection needs no run loop: the thread that starts it
    /// returns at once, and the callbacks run on the queue's threads.
    private func delegateQueue() {
        let deliveries = Deliveries(), request = self.request
        let starter = Mutex("")
        let returned = DispatchSemaphore(value: 0)
        Thread {
            nameThisThread("lab.case-c")
            // Made in the block: Thread's block is @Sendable on Apple's systems, and not every SDK
            // marks OperationQueue Sendable. The connection keeps it.
            let queue = OperationQueue()
            queue.name = "lab.delegate-queue"
            queue.maxConcurrentOperationCount = 1
            starter.withLock { $0 = currentThread() }
            let connection = URLConnection(request: request, delegate: deliveries, startImmediately: false)
            connection.setDelegateQueue(queue)  // before start(): a started connection cannot move
            connection.start()
            returned.signal()  // and the thread ends, with no run loop ever run
        }.start()
        returned.wait()
        deliveries.ended.wait()
        run.log("case c: \(ByteFormat.grouped(Int64(deliveries.bytes))) bytes delivered, \(deliveries.callbacks) "
            + "callbacks on queue '\(deliveries.queues.joined(separator: "', '"))', on thread "
            + "\(deliveries.threads.joined(separator: ", ")); the starting thread \(starter.withLock { $0 }) "
            + "ran no run loop\(deliveries.failure.map { "; failed: \($0)" } ?? "")")
    }

    /// (d) A loop that runs in a mode of its own stands in for the main thread while a finger
    /// drags a scroll view. A connection scheduled in `.default` only is not served meanwhile; one
    /// scheduled in `.common` is, because the tracking mode is one of the common modes.
    private func runLoopModes() {
        let viaDefault = Deliveries(), viaCommon = Deliveries(), request = self.request, run = self.run
        let trackingTime = 1.0
        let finished = DispatchSemaphore(value: 0)
        Thread {
            nameThisThread("lab.case-d")
            let tracking = RunLoop.Mode("lab.tracking")
            // UIKit makes its tracking mode one of the main run loop's common modes; do the same.
            addToCommonModes(tracking)
            let defaultOnly = URLConnection(request: request, delegate: viaDefault, startImmediately: false)
            defaultOnly.schedule(in: .current, forMode: .default)
            defaultOnly.start()
            let common = URLConnection(request: request, delegate: viaCommon, startImmediately: false)
            common.schedule(in: .current, forMode: .common)
            common.start()

            // A timer in the tracking mode stands in for the touches that keep the UI tracking.
            let touches = Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }
            RunLoop.current.add(touches, forMode: tracking)
            let fingerLifts = Date(timeIntervalSinceNow: trackingTime)
            while Date() < fingerLifts { _ = RunLoop.current.run(mode: tracking, before: fingerLifts) }
            touches.invalidate()
            let duringDefault = viaDefault.bytes, duringCommon = viaCommon.bytes

            // The finger lifts: the loop runs in the default mode again.
            RunLoop.current.run(mode: .default, until: { viaDefault.hasEnded && viaCommon.hasEnded })
            run.log("case d: default-mode connection: \(ByteFormat.grouped(Int64(duringDefault))) bytes delivered "
                + "while the loop ran in mode '\(tracking.rawValue)' for \(seconds(trackingTime)), "
                + "\(ByteFormat.grouped(Int64(viaDefault.bytes))) once it ran in the default mode again")
            run.log("case d: common-mode connection: \(ByteFormat.grouped(Int64(duringCommon))) bytes delivered "
                + "while the loop ran in mode '\(tracking.rawValue)', on thread \(viaCommon.threads.joined(separator: ", "))")
            finished.signal()
        }.start()
        finished.wait()
    }

    /// (e) One connection more than the machine has cores, all at once, each started the variant's
    /// way, while some unrelated work is sent to GCD's global queue.
    private func severalAtOnce() {
        let count = ProcessInfo.processInfo.activeProcessorCount + 1
        let connections = (0..<count).map { _ in Deliveries() }
        let request = self.request
        let started = Date()
        var exits: [DispatchSemaphore] = []
        for (index, deliveries) in connections.enumerated() {
            let start: @Sendable () -> Void = { _ = URLConnection(request: request, delegate: deliveries) }
            switch run.variant {
            case .article: ArticleDownload.startInBackground(start)
            case .corrected:
                let left = DispatchSemaphore(value: 0)
                exits.append(left)
                CorrectedDownload.startInBackground(threadName: "lab.case-e\(index + 1)", start, leftRunLoop: { left.signal() })
            }
        }
        let sent = Date()
        let ran = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { ran.signal() }
        ran.wait()
        let waited = Date().timeIntervalSince(sent)
        for deliveries in connections { deliveries.ended.wait() }
        let took = Date().timeIntervalSince(started)
        for left in exits { left.wait() }
        let bytes = connections.map { ByteFormat.grouped(Int64($0.bytes)) }.joined(separator: " + ")
        let how = run.variant == .article ? "each on a GCD worker parked in run()" : "each on a thread of its own"
        run.log("case e: \(count) connections at once (\(count - 1) cores), \(how): \(bytes) bytes delivered, all done after "
            + "\(seconds(took, digits: 3)); a block sent to the global queue meanwhile waited \(seconds(waited, digits: 3))")
    }
}

/// Like UIKit does for its tracking mode: items scheduled in `.common` are served in `mode` too.
/// Only Core Foundation can do this; Foundation's `RunLoop` has no method for it.
func addToCommonModes(_ mode: RunLoop.Mode) {
    #if canImport(Darwin)
    CFRunLoopAddCommonMode(CFRunLoopGetCurrent(), CFRunLoopMode(rawValue: mode.rawValue as CFString))
    #else
    CFRunLoopAddCommonMode(CFRunLoopGetCurrent(), CFStringCreateWithCString(nil, mode.rawValue, CFStringBuiltInEncodings.UTF8.rawValue))
    #endif
}
