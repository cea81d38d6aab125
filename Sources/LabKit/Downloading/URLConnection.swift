import CoreFoundation
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// The four callbacks of `NSURLConnectionDataDelegate` that the articles implement.
public protocol URLConnectionDataDelegate: AnyObject {
    func connection(_ connection: URLConnection, didReceive response: URLResponse)
    func connection(_ connection: URLConnection, didReceive data: Data)
    func connectionDidFinishLoading(_ connection: URLConnection)
    func connection(_ connection: URLConnection, didFailWithError error: any Error)
}

/// A work-alike of `NSURLConnection`, which Foundation on Linux does not have, built on URLSession.
///
/// The contract, as on Darwin:
/// - Callbacks arrive one at a time, in order, on the run loop of the thread that called `start()`
///   (or the run loop and modes given to `schedule(in:forMode:)`), and only while that run loop
///   runs in one of those modes. A thread that never runs its run loop never hears back.
/// - After `setDelegateQueue(_:)`, callbacks run on that queue instead.
/// - The connection keeps itself and its delegate alive until it finishes, fails or is cancelled.
///   While it is scheduled, it keeps its run loop from running dry, and lets go at the end, so
///   `RunLoop.current.run()` on a secondary thread returns when the transfer is over.
/// - After `cancel()`, no delegate method is called. `cancel()` returns at once.
///
/// Unlike a bare URLSession on Linux, it applies backpressure: at most `chunksInFlight` chunks
/// wait for the delegate, so a slow delegate slows the sender instead of filling memory.
public final class URLConnection: @unchecked Sendable {
    // @unchecked: the delegate, RunLoop and Timer are not Sendable. The delegate is only called
    // from the single delivery context (that run loop's thread, or the queue serialized by
    // `deliveryLock`); the rest of the mutable state is only touched under `lock`.

    public let originalRequest: URLRequest
    private let delegate: any URLConnectionDataDelegate
    private let chunksInFlight = 64
    private let freeChunkSlots: DispatchSemaphore
    private let deliveryLock = NSLock()
    private let lock = NSLock()
    private var state = State()  // guarded by `lock`

    fileprivate enum Event {
        case response(URLResponse)
        case data(Data)
        case finished
        case failed(any Error)
    }

    private struct State {
        var runLoop: RunLoop?
        var modes: [RunLoop.Mode] = []
        var delegateQueue: OperationQueue?
        var keepAlive: Timer?
        var session: URLSession?
        var task: URLSessionDataTask?
        var started = false
        var ended = false
        var pending: [Event] = []
        var deliveryScheduled = false
    }

    private func locked<T>(_ body: (inout State) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Creates a connection and, like `+connectionWithRequest:delegate:`, starts it at once in
    /// the current run loop's default mode unless `startImmediately` is false.
    public init(request: URLRequest, delegate: any URLConnectionDataDelegate, startImmediately: Bool = true) {
        originalRequest = request
        self.delegate = delegate
        freeChunkSlots = DispatchSemaphore(value: chunksInFlight)
        if startImmediately { start() }
    }

    /// Delivers callbacks on `runLoop` while it runs in `mode`. Call before `start()`; call again
    /// with more modes (for example `.common` so callbacks continue during UI tracking).
    public func schedule(in runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        locked { state in
            precondition(!state.started, "schedule(in:forMode:) must be called before start()")
            precondition(state.runLoop == nil || state.runLoop === runLoop, "one run loop per connection")
            state.runLoop = runLoop
            if !state.modes.contains(mode) { state.modes.append(mode) }
        }
    }

    /// Delivers callbacks on `queue` instead of a run loop. Call before `start()`.
    public func setDelegateQueue(_ queue: OperationQueue?) {
        locked { state in
            precondition(!state.started, "setDelegateQueue(_:) must be called before start()")
            state.delegateQueue = queue
        }
    }

    /// Where every connection records its exchanges: the lab's inspector, which the harness
    /// registers once per process. `NSURLConnection`'s initializer takes a request and a delegate
    /// and nothing else, so what watches its traffic is registered for the process, as
    /// `URLProtocol.registerClass(_:)` is on Apple's systems. nil (the default): nothing is recorded.
    public static func recordExchanges(in log: HTTPExchangeLog?) { exchangeLog.withLock { $0 = log } }
    private static let exchangeLog = Mutex<HTTPExchangeLog?>(nil)

    /// Sends the request. Without a schedule or a delegate queue, callbacks go to the current
    /// thread's run loop in the default mode.
    public func start() {
        let session = URLSession(
            configuration: .lab,
            delegate: SessionBridge(connection: self, exchange: Self.exchangeLog.withLock { $0 }?.entry(for: originalRequest)),
            delegateQueue: BoundedOperationQueue(capacity: chunksInFlight))
        let task = session.dataTask(with: originalRequest)
        let keepAlive: Timer? = locked { state in
            precondition(!state.started, "a connection starts once; create a new one to try again")
            state.started = true
            state.session = session
            state.task = task
            guard state.delegateQueue == nil else { return nil }
            if state.runLoop == nil {
                state.runLoop = RunLoop.current
                state.modes = [.default]
            }
            // An empty run loop returns from run() at once; this timer never fires, it only
            // keeps the loop alive until the connection ends.
            let timer = Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }
            state.keepAlive = timer
            return timer
        }
        if let keepAlive {
            let (runLoop, modes) = locked { ($0.runLoop!, $0.modes) }
            for mode in modes { runLoop.add(keepAlive, forMode: mode) }
        }
        task.resume()
    }

    /// Stops the transfer at once. No delegate method is called afterwards, and the caller never
    /// waits (see `URLSessionTask.cancelAtOnce()`). The session is let go when the task ends.
    public func cancel() {
        let ending: (discarded: Int, task: URLSessionDataTask?)? = locked { state in
            guard !state.ended else { return nil }
            state.ended = true
            let discarded = state.pending.count
            state.pending.removeAll()
            return (discarded, state.task)
        }
        guard let ending else { return }
        for _ in 0..<ending.discarded { freeChunkSlots.signal() }
        releaseRunLoop()
        ending.task?.cancelAtOnce()
    }

    /// Like `+sendSynchronousRequest:returningResponse:error:`: blocks until the whole response
    /// has arrived. Fine for a HEAD request; never for a large body.
    public static func sendSynchronousRequest(_ request: URLRequest) throws -> (response: URLResponse, data: Data) {
        let exchange = exchangeLog.withLock { $0 }?.entry(for: request)
        let outcome = Mutex<Result<(URLResponse, Data), any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let session = URLSession(configuration: .ephemeral)
        session.dataTask(with: request) { data, response, error in
            if let response, let data {
                outcome.withLock { $0 = .success((response, data)) }
            } else {
                outcome.withLock { $0 = .failure(error ?? URLError(.unknown)) }
            }
            done.signal()
        }.resume()
        done.wait()
        session.finishTasksAndInvalidate()
        switch outcome.withLock({ $0 })! {
        case .success(let (response, data)):
            exchange?.received(response)
            exchange?.received(bodyBytes: data.count)
            return (response, data)
        case .failure(let error):
            exchange?.failed(reason: describe(error))
            throw error
        }
    }

    // MARK: - From URLSession to the delegate

    /// Called on the session's bounded queue. Waiting for a free slot here is the backpressure.
    fileprivate func enqueue(_ event: Event) {
        freeChunkSlots.wait()
        let shouldSchedule: Bool? = locked { state in
            guard !state.ended else { return nil }
            state.pending.append(event)
            let alreadyScheduled = state.deliveryScheduled
            state.deliveryScheduled = true
            return !alreadyScheduled
        }
        guard let shouldSchedule else {
            freeChunkSlots.signal()
            return
        }
        if shouldSchedule { scheduleDelivery() }
    }

    private func scheduleDelivery() {
        let (queue, runLoop, modes) = locked { ($0.delegateQueue, $0.runLoop, $0.modes) }
        if let queue {
            queue.addOperation { self.deliverPending() }
        } else if let runLoop {
            // perform(inModes:) does not wake a sleeping run loop on Linux; adding a timer does.
            // A fired timer does not end `run(mode:before:)`, so the loop is stopped after the
            // batch: `run(mode:until:)` then checks its condition now, not at its next slice.
            let wake = Timer(timeInterval: 0, repeats: false) { _ in
                self.deliverPending()
                CFRunLoopStop(CFRunLoopGetCurrent())
            }
            for mode in modes { runLoop.add(wake, forMode: mode) }
        }
    }

    private func deliverPending() {
        deliveryLock.lock()
        defer { deliveryLock.unlock() }
        let batch = locked { state in
            let batch = state.pending
            state.pending.removeAll()
            state.deliveryScheduled = false
            return batch
        }
        for event in batch {
            defer { freeChunkSlots.signal() }
            if locked({ $0.ended }) { continue }
            switch event {
            case .response(let response):
                delegate.connection(self, didReceive: response)
            case .data(let data):
                delegate.connection(self, didReceive: data)
            case .finished:
                end()
                delegate.connectionDidFinishLoading(self)
            case .failed(let error):
                end()
                delegate.connection(self, didFailWithError: error)
            }
        }
    }

    private func end() {
        locked { $0.ended = true }
        releaseRunLoop()
    }

    /// Lets the run loop run dry again. A timer must be invalidated on its run loop's thread, so
    /// from any other thread this hops there first.
    private func releaseRunLoop() {
        let (runLoop, modes) = locked { ($0.runLoop, $0.modes) }
        guard let runLoop, locked({ $0.keepAlive != nil }) else { return }
        if RunLoop.current === runLoop {
            let keepAlive = locked { state in
                let timer = state.keepAlive
                state.keepAlive = nil
                return timer
            }
            keepAlive?.invalidate()
        } else {
            let release = Timer(timeInterval: 0, repeats: false) { _ in self.releaseRunLoop() }
            for mode in modes { runLoop.add(release, forMode: mode) }
        }
    }

    fileprivate func sessionDidComplete() {
        locked { $0.session }?.finishTasksAndInvalidate()
    }

    // MARK: - URLSession's delegate

    /// Receives URLSession's callbacks on the bounded queue and hands them to the connection.
    private final class SessionBridge: NSObject, URLSessionDataDelegate, Sendable {
        let connection: URLConnection
        let exchange: HTTPExchangeLog.Entry?

        init(connection: URLConnection, exchange: HTTPExchangeLog.Entry?) {
            self.connection = connection
            self.exchange = exchange
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            exchange?.received(response)
            connection.enqueue(.response(response))
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            exchange?.received(bodyBytes: data.count)
            connection.enqueue(.data(data))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            exchange?.redirected(by: response, to: request)
            completionHandler(request)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            CancelWhileCompleting.completionBegins(task)
            if let error {
                exchange?.failed(reason: describe(error))
                connection.enqueue(.failed(error))
            } else {
                connection.enqueue(.finished)
            }
            connection.sessionDidComplete()
        }
    }
}

extension RunLoop {
    /// Runs this run loop in `mode` until `isDone()` is true. Delegate callbacks scheduled on
    /// this loop run inside this call, on this thread.
    public func run(mode: RunLoop.Mode = .default, until isDone: () -> Bool) {
        while !isDone() {
            _ = run(mode: mode, before: Date(timeIntervalSinceNow: 0.05))
        }
    }
}
