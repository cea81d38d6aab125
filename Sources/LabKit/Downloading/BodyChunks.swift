import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

extension URLSession {
    /// LabKit's, on Linux and on Apple's systems alike (Apple's Foundation has no such call): the
    /// body of one response as the `Data` pieces the network delivers, usually 16 KiB each. It
    /// returns as soon as the response head has arrived, with the body still to come.
    ///
    /// `for try await byte in bytes` (Apple's `bytes(for:)`) takes one step per byte; this takes one
    /// per chunk, which is what writing a file wants. Each call runs its data task in a session of
    /// its own, with this session's configuration, invalidated when the body ends.
    public func bodyChunks(for request: URLRequest) async throws -> (BodyChunks, URLResponse) {
        try await BodyChunks.start(request, configuration: configuration) { $0 }
    }
}

/// The body of one response, in order, as the network delivers it: LabKit's type, the same on
/// every system. `URLSession.bodyChunks(for:)` makes one.
///
/// The contract:
/// - Iterating it gives the body's `Data` pieces (`for try await chunk in chunks`).
/// - It holds back the sender: `bufferedChunks` chunks wait for the reader, 64 more on the
///   delegate queue (about 1.25 MiB in all), and past that URLSession's thread waits, it stops
///   reading and the TCP window closes. The bytes on their way stay bounded whatever the file's
///   size and the reader's speed.
/// - A transfer that fails ends the iteration with its error (a dropped connection is
///   Foundation's `URLError`, after every byte that arrived before the drop).
/// - Cancelling the reading Task stops the transfer at once, as a Pause should: the reader
///   still gets the bytes that had already arrived (what sat in the socket's buffer and on
///   its way), then `CancellationError`. Calling `cancel()`, or dropping every copy of the
///   sequence, stops it and drops those bytes too. Cancelled before the response head,
///   `bodyChunks(for:)` throws the task's `URLError(.cancelled)`, or `CancellationError` when the
///   Task was cancelled before it.
/// - One reader: iterate it once.
/// - Read every body you start, or drop it. On Linux every URLSession's work queue targets one
///   shared queue, so a reader that has stopped holds back every transfer in the process: reading
///   one body to its end before starting to read another that is already open never finishes.
/// - Stopping uses `cancelAtOnce()`: on Linux, another transfer from the same host and port that
///   is receiving at that moment breaks too, with an error.
public struct BodyChunks: AsyncSequence, Sendable {
    public typealias Element = Data

    /// Chunks that may wait for the reader before the network is held back.
    public static let bufferedChunks = 16

    /// The data task underneath.
    public var task: URLSessionDataTask { channel.task }
    @usableFromInline let channel: ChunkChannel
    /// Cancels the transfer when the last copy of the sequence, or its last iterator, is gone.
    private let lifetime: Lifetime

    fileprivate init(channel: ChunkChannel) {
        self.channel = channel
        lifetime = Lifetime(channel)
    }

    /// Stops the transfer now. The reader's next step throws `CancellationError`.
    public func cancel() { channel.cancel() }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: self) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        fileprivate let chunks: BodyChunks
        public mutating func next() async throws -> Data? { try await chunks.channel.next() }
    }

    /// Starts `request` in a session of its own (its delegate wrapped by `wrap`, for the lab's
    /// inspector) and returns once the response head is in.
    static func start(
        _ request: URLRequest, configuration: URLSessionConfiguration,
        wrap: (any URLSessionDataDelegate) -> any URLSessionDataDelegate
    ) async throws -> (BodyChunks, URLResponse) {
        // A Task cancelled already starts nothing (and shuts no connection down).
        try Task.checkCancellation()
        let receiver = BodyReceiver()
        // Bounded so that a reader who is behind holds back URLSession's thread, not memory.
        // Its own queue, as the delegate waits for the reader (`ChunkChannel.send`): in GCD's
        // shared pool the wait would hold a thread the reader's Task may be waiting for.
        let delivery = BoundedOperationQueue(capacity: 64, ownQueueLabel: "BodyChunks delivery")
        let session = URLSession(configuration: configuration, delegate: wrap(receiver), delegateQueue: delivery)
        let task = session.dataTask(with: request)
        let channel = ChunkChannel(task: task, capacity: bufferedChunks)
        receiver.channel = channel
        let response = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                receiver.waitForResponse(continuation)
                task.resume()
            }
        } onCancel: {
            channel.cancel()
        }
        return (BodyChunks(channel: channel), response)
    }
}

#if canImport(FoundationNetworking)
extension URLSession {
    /// `bytes(for:)` as Apple's systems have it since 2021, which Foundation on Linux lacks:
    /// returns as soon as the response head has arrived, with the body still to come. It is a
    /// `BodyChunks` read one byte at a time, with the same contract.
    public func bytes(for request: URLRequest) async throws -> (AsyncBytes, URLResponse) {
        let (chunks, response) = try await bodyChunks(for: request)
        return (AsyncBytes(chunks: chunks), response)
    }

    /// `bytes(for:)` with a plain GET of `url`.
    public func bytes(from url: URL) async throws -> (AsyncBytes, URLResponse) {
        try await bytes(for: URLRequest(url: url))
    }

    /// The body of one response, one byte at a time, as Apple's `URLSession.AsyncBytes` gives it.
    public struct AsyncBytes: AsyncSequence, Sendable {
        public typealias Element = UInt8

        @usableFromInline let chunks: BodyChunks

        init(chunks: BodyChunks) { self.chunks = chunks }

        /// The data task underneath, as on Apple's systems.
        public var task: URLSessionDataTask { chunks.task }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: self) }

        /// One step per byte. The step is inlined into the caller's loop (in an optimized build),
        /// so a byte already in hand costs a read from memory, and only the first byte of each
        /// chunk awaits the network. What the caller's loop does per byte is the cost that stays.
        public struct AsyncIterator: AsyncIteratorProtocol {
            @usableFromInline let bytes: AsyncBytes
            @usableFromInline var chunk = Data()
            @usableFromInline var index = 0

            fileprivate init(bytes: AsyncBytes) { self.bytes = bytes }

            @inlinable
            public mutating func next() async throws -> UInt8? {
                if index < chunk.endIndex {
                    defer { index += 1 }
                    return chunk[index]
                }
                return try await nextChunk()
            }

            /// The slow path: waits for the next chunk and returns its first byte.
            @usableFromInline
            mutating func nextChunk() async throws -> UInt8? {
                repeat {
                    guard let next = try await bytes.chunks.channel.next() else { return nil }
                    chunk = next
                    index = next.startIndex
                } while chunk.isEmpty
                defer { index += 1 }
                return chunk[index]
            }
        }
    }
}
#endif

private final class Lifetime: Sendable {
    let channel: ChunkChannel
    init(_ channel: ChunkChannel) { self.channel = channel }
    deinit { channel.cancel() }
}

/// The session's delegate behind one `BodyChunks`: the response goes to whoever awaits
/// `bodyChunks(for:)`, each chunk into the channel, and the end of the task closes it.
private final class BodyReceiver: NSObject, URLSessionDataDelegate, Sendable {
    private enum Head {
        /// Nobody waits yet, and nothing has come.
        case pending
        case awaited(CheckedContinuation<URLResponse, any Error>)
        /// The response (or the error) came before anybody waited for it.
        case arrived(Result<URLResponse, any Error>)
        case delivered
    }
    private let head = Mutex(Head.pending)
    private let channelSlot = Mutex<ChunkChannel?>(nil)

    var channel: ChunkChannel? {
        get { channelSlot.withLock { $0 } }
        set { channelSlot.withLock { $0 = newValue } }
    }

    func waitForResponse(_ continuation: CheckedContinuation<URLResponse, any Error>) {
        let arrived: Result<URLResponse, any Error>? = head.withLock { head in
            guard case .arrived(let result) = head else {
                head = .awaited(continuation)
                return nil
            }
            head = .delivered
            return result
        }
        if let arrived { continuation.resume(with: arrived) }
    }

    /// Hands the response (or the error that came instead) to the caller of `bytes(for:)`, once.
    private func deliverHead(_ result: Result<URLResponse, any Error>) {
        let waiting: CheckedContinuation<URLResponse, any Error>? = head.withLock { head in
            switch head {
            case .pending:
                head = .arrived(result)
                return nil
            case .awaited(let continuation):
                head = .delivered
                return continuation
            case .arrived, .delivered:
                return nil
            }
        }
        waiting?.resume(with: result)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        completionHandler(.allow)
        deliverHead(.success(response))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        channel?.send(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        CancelWhileCompleting.completionBegins(task)
        // A transfer that ends before any response head: the caller of bodyChunks(for:) gets why.
        deliverHead(.failure(error ?? URLError(.badServerResponse)))
        channel?.finish(error)
        session.finishTasksAndInvalidate()
    }
}

/// Chunks on their way from the network thread to one async reader, at most `capacity` at a
/// time. The sender blocks (it is the session's delegate queue, never a Swift concurrency
/// thread); the reader suspends.
@usableFromInline
final class ChunkChannel: Sendable {
    private enum Phase {
        /// The body is arriving.
        case open
        /// The reader's Task was cancelled and the transfer is being stopped: what already
        /// arrived is still handed over, and the end is `CancellationError`.
        case stopping
        /// The transfer has ended: the reader takes what is left, then gets nil or the error.
        case ended((any Error)?)
        /// Abandoned: no byte is handed out again.
        case cancelled

        var takesChunks: Bool {
            switch self {
            case .open, .stopping: true
            case .ended, .cancelled: false
            }
        }
    }

    private struct State {
        var phase = Phase.open
        var chunks: [Data] = []
        /// Set while the reader is suspended, waiting for the next chunk or the end.
        var reader: CheckedContinuation<Data?, any Error>?
        /// Set while the sender waits for room (`roomMade`).
        var senderWaits = false

        var isCancelled: Bool {
            if case .cancelled = phase { true } else { false }
        }
    }

    let task: URLSessionDataTask
    private let capacity: Int
    private let state = Mutex(State())
    /// Signalled once for each wait of the sender, so that it is balanced when the channel goes.
    private let roomMade = DispatchSemaphore(value: 0)

    init(task: URLSessionDataTask, capacity: Int) {
        self.task = task
        self.capacity = capacity
    }

    /// Called by the network side, one chunk at a time: waits while the reader is `capacity`
    /// chunks behind.
    func send(_ chunk: Data) {
        enum Step { case handedOver(CheckedContinuation<Data?, any Error>), done, wait }
        while true {
            let step: Step = state.withLock { state in
                guard state.phase.takesChunks else { return .done }
                if let reader = state.reader {
                    state.reader = nil
                    return .handedOver(reader)
                }
                guard state.chunks.count >= capacity else {
                    state.chunks.append(chunk)
                    return .done
                }
                state.senderWaits = true
                return .wait
            }
            switch step {
            case .handedOver(let reader): return reader.resume(returning: chunk)
            case .done: return
            case .wait: roomMade.wait()
            }
        }
    }

    /// Called when the task completes: nil for a body that ended well.
    func finish(_ error: (any Error)?) {
        let (reader, end): (CheckedContinuation<Data?, any Error>?, (any Error)?) = state.withLock { state in
            let end: (any Error)?
            switch state.phase {
            case .open: end = error
            // A transfer stopped for a cancelled Task ends as cancelled, whatever libcurl said.
            case .stopping: end = CancellationError()
            case .ended, .cancelled: return (nil, nil)
            }
            state.phase = .ended(end)
            defer { state.reader = nil }
            return (state.reader, end)
        }
        if let end { reader?.resume(throwing: end) } else { reader?.resume(returning: nil) }
    }

    /// The reader's side: the next chunk, nil at the end of the body.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                let (outcome, wakeSender): (Result<Data?, any Error>?, Bool) = state.withLock { state in
                    precondition(state.reader == nil, "BodyChunks has one reader at a time")
                    if !state.chunks.isEmpty {
                        let chunk = state.chunks.removeFirst()
                        defer { state.senderWaits = false }
                        return (.success(chunk), state.senderWaits)
                    }
                    switch state.phase {
                    case .open, .stopping:
                        state.reader = continuation
                        return (nil, false)
                    case .ended(let error):
                        return (error.map { .failure($0) } ?? .success(nil), false)
                    case .cancelled:
                        return (.failure(CancellationError()), false)
                    }
                }
                if wakeSender { roomMade.signal() }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            stop()
        }
    }

    /// The reader's Task was cancelled: stop the transfer now, and let the reader have what had
    /// already arrived (the socket's buffer, the chunks on their way), so that a Pause keeps
    /// every byte it paid for. The reader then gets `CancellationError`.
    private func stop() {
        let stopNow: Bool = state.withLock { state in
            guard case .open = state.phase else { return false }
            state.phase = .stopping
            return true
        }
        if stopNow { task.cancelAtOnce() }
    }

    /// Nobody will read again: stop the transfer, drop what is waiting, wake both sides (the
    /// reader with `CancellationError`, the sender so that it drops what it holds).
    func cancel() {
        let (reader, wakeSender, transferRunning): (CheckedContinuation<Data?, any Error>?, Bool, Bool) = state.withLock { state in
            guard !state.isCancelled else { return (nil, false, false) }
            let transferRunning = state.phase.takesChunks
            state.phase = .cancelled
            state.chunks = []
            defer {
                state.reader = nil
                state.senderWaits = false
            }
            return (state.reader, state.senderWaits, transferRunning)
        }
        if wakeSender { roomMade.signal() }
        reader?.resume(throwing: CancellationError())
        if transferRunning { task.cancelAtOnce() }
    }
}
