#if canImport(FoundationNetworking)
import Foundation

extension Stream {
    /// Apple's `getBoundStreams(withBufferSize:inputStream:outputStream:)`, which Foundation on
    /// Linux lacks: a pair of streams joined by a buffer of `bufferSize` bytes. What is written to
    /// the output stream is read, in order, from the input stream; hand the input stream to
    /// URLSession (`urlSession(_:task:needNewBodyStream:)`) and write the body from a thread of
    /// your own.
    ///
    /// The contract, as far as it concerns the lab:
    /// - `write` waits while the buffer is full, and writes what fits (at least one byte);
    ///   `read` waits while it is empty, and reads what is there.
    /// - Closing the output stream ends the input stream: once the buffer is drained, `read`
    ///   returns 0. Closing the input stream (the reader gave up) makes every `write` return -1.
    /// - `hasBytesAvailable` is true until the end has been read: a read may have to wait.
    ///
    /// Apple's call takes `AutoreleasingUnsafeMutablePointer`s; `&input` reads the same here.
    public class func getBoundStreams(withBufferSize bufferSize: Int, inputStream: UnsafeMutablePointer<InputStream?>?,
                                      outputStream: UnsafeMutablePointer<OutputStream?>?) {
        let pipe = BoundPipe(capacity: max(1, bufferSize))
        inputStream?.pointee = BoundInputStream(pipe)
        outputStream?.pointee = BoundOutputStream(pipe)
    }
}

/// The buffer between the two streams: a ring of bytes, guarded by a condition.
private final class BoundPipe: @unchecked Sendable {
    // @unchecked: every field is read and written with `condition` locked.
    private let condition = NSCondition()
    private let ring: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var start = 0
    private var count = 0
    private var writerClosed = false
    private var readerClosed = false

    init(capacity: Int) {
        self.capacity = capacity
        ring = .allocate(capacity: capacity)
    }

    deinit { ring.deallocate() }

    /// Waits for room, then copies what fits; -1 once the reader has closed.
    func write(_ bytes: UnsafePointer<UInt8>, maxLength: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        while count == capacity && !readerClosed { condition.wait() }
        guard !readerClosed, !writerClosed else { return -1 }
        let written = min(maxLength, capacity - count)
        // The free space runs from the end of the bytes to the ring's end, then on from its start.
        let end = (start + count) % capacity
        let first = min(written, capacity - end)
        (ring + end).update(from: bytes, count: first)
        ring.update(from: bytes + first, count: written - first)
        count += written
        condition.broadcast()
        return written
    }

    /// Waits for bytes, then copies what is there; 0 at the end of the stream, -1 once closed.
    func read(_ bytes: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        while count == 0 && !writerClosed && !readerClosed { condition.wait() }
        guard !readerClosed else { return -1 }
        let taken = min(maxLength, count)
        let first = min(taken, capacity - start)
        bytes.update(from: ring + start, count: first)
        (bytes + first).update(from: ring, count: taken - first)
        start = (start + taken) % capacity
        count -= taken
        condition.broadcast()
        return taken
    }

    var isDrained: Bool { condition.withLock { writerClosed && count == 0 } }
    var readerHasClosed: Bool { condition.withLock { readerClosed } }

    func closeWriter() { close { $0.writerClosed = true } }
    func closeReader() { close { $0.readerClosed = true } }

    private func close(_ mark: (BoundPipe) -> Void) {
        condition.withLock { mark(self) }
        condition.broadcast()
    }
}

/// The reading end. Like any stream, it belongs to one thread at a time (URLSession's).
private final class BoundInputStream: InputStream {
    private let pipe: BoundPipe
    private var status = Stream.Status.notOpen

    init(_ pipe: BoundPipe) {
        self.pipe = pipe
        super.init(data: Data())
    }

    /// URLSession opens a body stream but does not always close it: a reader that is gone must
    /// not leave the writer waiting for room.
    deinit { pipe.closeReader() }

    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { nil }
    override var hasBytesAvailable: Bool { status == .open }

    override func open() { status = .open }

    override func close() {
        pipe.closeReader()
        status = .closed
    }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        guard status == .open else { return status == .atEnd ? 0 : -1 }
        let count = pipe.read(buffer, maxLength: maxLength)
        if count == 0, pipe.isDrained { status = .atEnd }
        return count
    }
}

/// The writing end. Like any stream, it belongs to one thread at a time (the writer's).
private final class BoundOutputStream: OutputStream {
    private let pipe: BoundPipe
    private var status = Stream.Status.notOpen

    init(_ pipe: BoundPipe) {
        self.pipe = pipe
        super.init(toMemory: ())
    }

    /// A writer that is gone ends the reader's stream.
    deinit { pipe.closeWriter() }

    /// Foundation requires every output stream to have this initializer. A stream made by it has
    /// nothing at the other end: every write returns -1.
    required convenience init(toMemory: ()) {
        let unread = BoundPipe(capacity: 1)
        unread.closeReader()
        self.init(unread)
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { status == .error ? POSIXError(.EPIPE) : nil }
    override var hasSpaceAvailable: Bool { status == .open && !pipe.readerHasClosed }

    override func open() { status = .open }

    override func close() {
        pipe.closeWriter()
        status = .closed
    }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength: Int) -> Int {
        guard status == .open else { return -1 }
        let written = pipe.write(buffer, maxLength: maxLength)
        if written < 0 { status = .error }
        return written
    }
}
#endif
