/// Copied from Sources/lesson-06-runloop-thread/Shared.swift by `lab exercise reset`: what both
/// variants use. Your code is in Article.swift.
import CoreFoundation
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

/// How a variant gets a connection off the calling thread: the one thing cases b and e vary.
protocol StartsInBackground: LessonDownload {
    init(_ run: LessonRun)
    static func startInBackground(_ start: @escaping @Sendable () -> Void)
}

/// The download for the way picked with `--way`.
func download<Download: StartsInBackground>(_ run: LessonRun, _ way: RunLoopThreadWay, startingEach: Download.Type,
                                            onQueue: (LessonRun) -> any LessonDownload) -> any LessonDownload {
    switch way {
    case .story, .runLoop: Download(run)
    case .delegateQueue: onQueue(run)
    case .crowd: CrowdedDownload(run, startingEach: Download.startInBackground)
    }
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
        var globalWorker: String?
        var onMainThread = false
    }
    private let state = Mutex(State())
    let ended = DispatchSemaphore(value: 0)
    private let whenEnded: @Sendable () -> Void

    init(whenEnded: @escaping @Sendable () -> Void = {}) { self.whenEnded = whenEnded }

    var bytes: Int { state.withLock { $0.bytes } }
    var callbacks: Int { state.withLock { $0.callbacks } }
    var threads: [String] { state.withLock { $0.threads } }
    var queues: [String] { state.withLock { $0.queues } }
    var hasEnded: Bool { state.withLock { $0.ended } }
    var failure: String? { state.withLock { $0.failure } }
    /// The global queue whose worker ran a callback, if one did.
    var globalWorker: String? { state.withLock { $0.globalWorker } }
    /// Whether a callback ran on the main thread.
    var ranOnMainThread: Bool { state.withLock { $0.onMainThread } }

    private func note(bytes: Int = 0, end: Bool = false, failure: String? = nil) {
        let thread = currentThread(), queue = OperationQueue.current?.name, worker = globalQueueWorker()
        let endsNow = state.withLock { state in
            state.globalWorker = state.globalWorker ?? worker
            state.onMainThread = state.onMainThread || Thread.isMainThread
            state.callbacks += 1
            state.bytes += bytes
            if !state.threads.contains(thread) { state.threads.append(thread) }
            if let queue, !state.queues.contains(queue) { state.queues.append(queue) }
            state.failure = state.failure ?? failure
            defer { state.ended = state.ended || end }
            return end && !state.ended
        }
        if endsNow {
            ended.signal()
            whenEnded()
        }
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) { note() }
    func connection(_ connection: URLConnection, didReceive data: Data) { note(bytes: data.count) }
    func connectionDidFinishLoading(_ connection: URLConnection) { note(end: true) }
    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        note(end: true, failure: error.localizedDescription)
    }
}

// MARK: - Case e as the download

/// The file, with one more transfer of it per core started at the same moment and the same way,
/// as an app that fetches several files at once. Then the app sends a job to GCD's global queue;
/// if that job waits longer than `patience`, the app counts as frozen and the run fails.
final class CrowdedDownload: LessonDownload {
    private let run: LessonRun
    private let startInBackground: (@escaping @Sendable () -> Void) -> Void
    static let patience = 0.5
    private var transfer: Transfer?

    init(_ run: LessonRun, startingEach startInBackground: @escaping (@escaping @Sendable () -> Void) -> Void) {
        self.run = run
        self.startInBackground = startInBackground
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let allEnded = DispatchGroup()
        let others = (0..<ProcessInfo.processInfo.activeProcessorCount).map { _ in
            allEnded.enter()
            return Deliveries(whenEnded: { allEnded.leave() })
        }
        for (index, deliveries) in others.enumerated() {
            let request = URLRequest(url: Self.companionURL(run.faultFreeURL, index + 1))
            startInBackground { _ = URLConnection(request: request, delegate: deliveries) }
        }
        allEnded.enter()
        let (run, transfer) = (run, Transfer(run, whenEnded: { _ in allEnded.leave() }))
        self.transfer = transfer
        startInBackground { transfer.start() }

        let sent = Date()
        DispatchQueue.global().async {
            let waited = Date().timeIntervalSince(sent)
            allEnded.notify(queue: .global()) {
                run.log("case e: the download and \(others.count) more transfers at once; a job sent to the global queue "
                    + "meanwhile waited \(seconds(waited, digits: 3))")
                guard waited <= Self.patience else {
                    return completion(.failed(DownloadError.unresponsive(waited: waited, patience: Self.patience)))
                }
                // The job may have found a worker free this time (the transfers started late, on
                // another QoS, or fewer than the workers): a parked worker is the defect anyway.
                let parked = others.compactMap(\.globalWorker) + [transfer.globalWorker].compactMap { $0 }
                if let queue = parked.first {
                    return completion(.failed(DownloadError.parkedGlobalWorkers(parked: parked.count, transfers: others.count + 1, queue: queue)))
                }
                let onMain = others.filter(\.ranOnMainThread).count + (transfer.ranOnMainThread ? 1 : 0)
                if onMain > 0 {
                    return completion(.failed(DownloadError.callbacksOnTheMainThread(count: onMain, transfers: others.count + 1)))
                }
                completion(transfer.outcome ?? .failed(URLError(.cannotConnectToHost)))
            }
        }
    }

    /// The same file, marked as another transfer: the lab server's log then counts only the
    /// download's own bytes for its run.
    static func companionURL(_ url: URL, _ number: Int) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "companion", value: String(number))]
        return components.url ?? url
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
    // nothing else touches it until it has ended; `outcome` is read only after that.
    private let run: LessonRun
    private let partial: PartialFile
    private let queue: OperationQueue?
    private var output: OutputStream?
    private var connection: URLConnection?
    private(set) var outcome: AttemptResult?
    private(set) var threads: [String] = []
    private(set) var threadIDs: [Int] = []
    /// The global queue whose worker ran a callback, if one did.
    private(set) var globalWorker: String?
    /// Whether a callback ran on the main thread.
    private(set) var ranOnMainThread = false
    private var seenThreads: [pthread_t] = []
    private var callbacks = 0
    private let whenEnded: @Sendable (AttemptResult) -> Void

    /// Callbacks go to `queue`, or else to the run loop of the thread that calls `start()`.
    /// `whenEnded` is called once, from the callback that ends the transfer.
    init(_ run: LessonRun, queue: OperationQueue? = nil, whenEnded: @escaping @Sendable (AttemptResult) -> Void = { _ in }) {
        self.run = run
        self.queue = queue
        self.whenEnded = whenEnded
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

    /// Says whether the thread that ran the callbacks, having left its run loop, has exited too:
    /// the kernel's word, waited for up to a second. Called from another thread.
    func reportThreadExit() {
        run.log("case b: thread \(threads.joined(separator: ", ")) left its run loop "
            + "(\(ThreadCensus.exited(threadIDs) ? "and exited" : "but is still running"))")
    }

    /// Counts the callback, and names its thread the first time that thread calls: naming
    /// reads /proc, which on every 16 KiB chunk cost this lesson about a tenth of its speed.
    private func noteThread() {
        callbacks += 1
        let thread = pthread_self()
        if !seenThreads.contains(where: { pthread_equal($0, thread) != 0 }) {
            seenThreads.append(thread)
            threads.append(currentThread())
            threadIDs.append(ThreadCensus.currentID)
            globalWorker = globalWorker ?? globalQueueWorker()
            ranOnMainThread = ranOnMainThread || Thread.isMainThread
        }
    }

    private func end(_ result: AttemptResult) {
        guard outcome == nil else { return }
        let via = queue.map { "case c: \(ByteFormat.grouped(Int64(callbacks))) callbacks on queue '\($0.name ?? "unnamed")'" }
            ?? "case b: \(ByteFormat.grouped(Int64(callbacks))) callbacks"
        run.log("\(via), on thread \(threads.joined(separator: ", "))")
        outcome = result
        whenEnded(result)
    }
}

/// "2.0 s".
func seconds(_ value: Double, digits: Int = 1) -> String {
    String(format: "%.\(digits)f s", value)
}
