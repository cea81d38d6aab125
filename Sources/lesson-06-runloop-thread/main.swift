/// Lesson 06: a connection started on a background thread, and the run loop that delivers it.
///
/// Follows §6 of "网络篇 - 03.NSURLConnection应用场景" (a connection reports back through the run
/// loop of the thread that started it, or through a delegate queue), note 5 of
/// "NSURLConnection下载文件并监测下载进度" (start the download on a GCD thread and keep that thread
/// in `[[NSRunLoop currentRunLoop] run]`), and the run-loop modes of "iOS 断点续传" (a connection
/// in the default mode stalls while the UI is tracking; schedule it in the common modes).
///
/// The default run shows the cases live, each on the first 64 KiB of the file:
/// (a) a thread that never runs its run loop hears nothing; (c) a delegate queue needs no run loop;
/// (d) a loop running in another mode delivers only what is scheduled in that mode; (e) several
/// connections at once, started the variant's way. Then (b), the download itself, on a background
/// thread that runs its run loop, resuming like lesson 03.
///
/// `ArticleDownload` keeps the article's threading: a GCD worker parked in its run loop.
/// `CorrectedDownload` uses a thread of its own, which exits when the transfer ends.
/// Read Lessons/06-runloop-thread.md next to this file.
import CoreFoundation
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import Synchronization

Lesson(
    id: "06-runloop-thread",
    title: "A connection on a background thread, and its run loop",
    defaultSize: 64 << 20,
    defaultFaults: "drop:40pct,ok",  // the first attempt breaks at 40%, the second one behaves
    ways: [
        "story": "cases a, c, d and e on 64 KiB slices, then the download as case b",
        "run-loop": "case b only: the download, delivered by its thread's run loop",
        "delegate-queue": "case c as the download: delivered on an OperationQueue, no run loop",
    ]
).run { run in
    if run.way == "story" { Cases(run).show() }
    switch (run.way, run.variant) {
    case ("delegate-queue", .article): return ArticleQueueDownload(run)
    case ("delegate-queue", .corrected): return CorrectedQueueDownload(run)
    case (_, .article): return ArticleDownload(run)
    case (_, .corrected): return CorrectedDownload(run)
    }
}

// MARK: - The cases

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
        let fetched = HTTPExchangeLog.shared.bodyBytesReceived
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
            let arrived = HTTPExchangeLog.shared.exchanges.last?.bodyBytes ?? 0
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
        let queue = OperationQueue()
        queue.name = "lab.delegate-queue"
        queue.maxConcurrentOperationCount = 1
        let starter = Mutex("")
        let returned = DispatchSemaphore(value: 0)
        Thread {
            nameThisThread("lab.case-c")
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
            case .corrected: exits.append(CorrectedDownload.startInBackground(threadName: "lab.case-e\(index + 1)", start))
            }
        }
        let sent = Date()
        let ran = DispatchSemaphore(value: 0)
        DispatchQueue.global().async { ran.signal() }
        ran.wait()
        let waited = Date().timeIntervalSince(sent)
        for deliveries in connections { deliveries.ended.wait() }
        let took = Date().timeIntervalSince(started)
        for exit in exits { exit.wait() }
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

/// What one case's connection delivered, and on which threads and queues.
final class Deliveries: URLConnectionDataDelegate, Sendable {
    private struct State {
        var bytes = 0
        var callbacks = 0
        var threads: [String] = []
        var queues: [String] = []
        var ended = false
        var failure: String?
    }
    private let state = Mutex(State())
    let ended = DispatchSemaphore(value: 0)

    var bytes: Int { state.withLock { $0.bytes } }
    var callbacks: Int { state.withLock { $0.callbacks } }
    var threads: [String] { state.withLock { $0.threads } }
    var queues: [String] { state.withLock { $0.queues } }
    var hasEnded: Bool { state.withLock { $0.ended } }
    var failure: String? { state.withLock { $0.failure } }

    private func note(bytes: Int = 0, end: Bool = false, failure: String? = nil) {
        let thread = currentThread(), queue = OperationQueue.current?.name
        state.withLock { state in
            state.callbacks += 1
            state.bytes += bytes
            if !state.threads.contains(thread) { state.threads.append(thread) }
            if let queue, !state.queues.contains(queue) { state.queues.append(queue) }
            state.ended = state.ended || end
            state.failure = state.failure ?? failure
        }
        if end { ended.signal() }
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) { note() }
    func connection(_ connection: URLConnection, didReceive data: Data) { note(bytes: data.count) }
    func connectionDidFinishLoading(_ connection: URLConnection) { note(end: true) }
    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        note(end: true, failure: error.localizedDescription)
    }
}

// MARK: - Case b, the article's version

/// Starts the connection on a GCD worker and keeps that worker in its run loop until the
/// connection lets go of it. While the transfer lasts, the worker is lost to every other job
/// sent to the global queue (case e).
final class ArticleDownload: LessonDownload {
    private let run: LessonRun

    init(_ run: LessonRun) { self.run = run }

    /// The article's way to get a connection off the main thread.
    static func startInBackground(_ start: @escaping @Sendable () -> Void) {
        DispatchQueue.global().async {
            start()
            // The connection is scheduled in this worker's run loop: run it, or nothing arrives.
            RunLoop.current.run()
        }
    }

    func downloadFile() -> AttemptResult {
        let transfer = Transfer(run)
        Self.startInBackground { transfer.start() }
        // The article's button handler returns here. A command-line program waits for the end.
        transfer.ended.wait()
        return transfer.outcome!
    }
}

// MARK: - Case b, the corrected version

/// Starts the connection on a thread of its own. Its run loop runs dry when the connection ends,
/// so `run()` returns and the thread exits: nothing stays parked, and GCD keeps all its workers.
final class CorrectedDownload: LessonDownload {
    private let run: LessonRun

    init(_ run: LessonRun) { self.run = run }

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

// MARK: - Case c as the download

/// §6 of "网络篇 - 03.NSURLConnection应用场景" again: a GCD worker, a delegate queue, and the run
/// loop run anyway. The listing sets the queue after the connection has started; Apple's
/// documentation says a started connection cannot be rescheduled, and LabKit's URLConnection
/// stops the program there, so this keeps the documented order. The run loop has nothing to run
/// then, so `run()` returns at once: harmless, and useless.
final class ArticleQueueDownload: LessonDownload {
    private let run: LessonRun
    private let queue = OperationQueue()

    init(_ run: LessonRun) { self.run = run }

    func downloadFile() -> AttemptResult {
        let transfer = Transfer(run, queue: queue)
        DispatchQueue.global().async {
            transfer.start()
            RunLoop.current.run()
        }
        transfer.ended.wait()
        return transfer.outcome!
    }
}

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

// MARK: - The transfer, as in lesson 03

/// The four callbacks of lesson 03's corrected download: append with an OutputStream only what
/// provably continues the partial file (`PartialFile`, LabKit). The lesson is about where these
/// callbacks run, so they also note their thread.
final class Transfer: URLConnectionDataDelegate, @unchecked Sendable {
    // @unchecked: Thread and DispatchQueue take only Sendable closures, and OutputStream and
    // PartialFile are not Sendable. The transfer is handed to one connection, which calls it one
    // callback at a time (on a thread's run loop, or on a queue under its delivery lock), and
    // nothing else touches it until `ended` is signalled; the waiting thread reads it after that.
    private let run: LessonRun
    private let partial: PartialFile
    private let queue: OperationQueue?
    private var output: OutputStream?
    private var connection: URLConnection?
    private(set) var outcome: AttemptResult?
    private(set) var threads: [String] = []
    private(set) var threadIDs: [Int] = []
    private var callbacks = 0
    let ended = DispatchSemaphore(value: 0)

    /// Callbacks go to `queue`, or else to the run loop of the thread that calls `start()`.
    init(_ run: LessonRun, queue: OperationQueue? = nil) {
        self.run = run
        self.queue = queue
        partial = PartialFile(run)
    }

    func start() {
        let connection = URLConnection(request: partial.nextRequest(), delegate: self, startImmediately: false)
        if let queue { connection.setDelegateQueue(queue) }
        connection.start()
        self.connection = connection
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        noteThread()
        switch partial.decide(response) {
        case .append: open(append: true)
        case .replace: open(append: false)
        case .complete: break  // nothing is missing; the (empty) body is not written anywhere
        case .startOver:
            connection.cancel()
            start()
        case .reject(let error): fail(error)
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        noteThread()
        guard let output else { return }
        do { try partial.append(data, through: output) } catch { fail(error) }
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        noteThread()
        closeOutput()
        partial.finished()
        end(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // The partial file and its sidecar stay on disk, ready for the next attempt.
        noteThread()
        closeOutput()
        end(.failed(error))
    }

    private func open(append: Bool) {
        output = OutputStream(toFileAtPath: run.file.path, append: append)
        output?.open()
        if output?.streamStatus != .open {
            fail(DownloadError.localIO(path: run.file.path, reason: "cannot open it for writing"))
        }
    }

    private func closeOutput() {
        output?.close()
        output = nil
    }

    private func fail(_ error: any Error) {
        connection?.cancel()
        closeOutput()
        end(.failed(error))
    }

    private func noteThread() {
        callbacks += 1
        let thread = currentThread()
        if !threads.contains(thread) {
            threads.append(thread)
            threadIDs.append(ThreadCensus.currentID)
        }
    }

    private func end(_ result: AttemptResult) {
        guard outcome == nil else { return }
        let via = queue.map { "case c: \(ByteFormat.grouped(Int64(callbacks))) callbacks on queue '\($0.name ?? "unnamed")'" }
            ?? "case b: \(ByteFormat.grouped(Int64(callbacks))) callbacks"
        run.log("\(via), on thread \(threads.joined(separator: ", "))")
        outcome = result
        ended.signal()
    }
}

/// "2.0 s".
func seconds(_ value: Double, digits: Int = 1) -> String {
    String(format: "%.\(digits)f s", value)
}
