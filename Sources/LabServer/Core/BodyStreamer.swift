import LabFixtures
import LabVocabulary
import NIOCore
import NIOHTTP1

/// Sends one fixture body chunk by chunk, applying the body faults of its attempt.
///
/// The next chunk is produced only after the previous write has reached the socket, so a
/// slow client holds at most one chunk in memory however large the fixture is. Everything
/// here runs on the connection's event loop.
final class BodyStreamer {
    enum Ending {
        /// The body is complete and the connection can carry another request.
        case complete
        /// The connection must close now: a drop, a lying Content-Length, a link's reset, or a
        /// compression that failed midway.
        case closeConnection
    }

    /// Large enough that per-chunk overhead stays small in debug builds (about 1 GB/s on
    /// loopback), small enough that memory stays flat per connection.
    private static let chunkSize: Int64 = 256 * 1024
    /// Throttled bodies go out in slices this many times a second, so the rate looks smooth
    /// to a progress bar instead of arriving in 256 KiB bursts.
    private static let throttleSlicesPerSecond: Int64 = 50

    /// Where the body's bytes come from.
    enum Source {
        /// The fixture itself, from an offset (a range).
        case identity(Fixture, firstOffset: Int64)
        /// The fixture's gzip encoding, made as it goes.
        case gzip(GzipStream)
    }

    private let context: ChannelHandlerContext
    private let source: Source
    private let length: Int64
    private let plan: BodyPlan
    private let onBytesWritten: (Int64) -> Void
    private let onStall: () -> Void
    private let onEnd: (Ending) -> Void

    private var sent: Int64 = 0
    private var stallPending: Bool
    /// The next of the plan's pauses.
    private var nextPause = 0
    /// Throttling aims at `paceStart + bytes / rate`, so timer jitter does not add up.
    private var paceStart = NIODeadline.now()
    private var bytesSentAtPaceStart: Int64 = 0
    private var timer: Scheduled<Void>?
    private var isCancelled = false

    init(context: ChannelHandlerContext, source: Source, length: Int64, plan: BodyPlan,
         onBytesWritten: @escaping (Int64) -> Void, onStall: @escaping () -> Void, onEnd: @escaping (Ending) -> Void) {
        self.context = context
        self.source = source
        self.length = length
        self.plan = plan
        self.onBytesWritten = onBytesWritten
        self.onStall = onStall
        self.onEnd = onEnd
        stallPending = plan.stallAt != nil
    }

    func start() {
        restartPacing()
        sendNext()
    }

    /// Called when the connection goes away; pending timers would only write into the void.
    func cancel() {
        isCancelled = true
        timer?.cancel()
        timer = nil
    }

    private func sendNext() {
        guard !isCancelled else { return }
        if nextPause < plan.pauses.count, plan.pauses[nextPause].at == sent {
            let pause = plan.pauses[nextPause]
            nextPause += 1
            context.flush()
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(pause.duration)) {
                self.restartPacing()
                self.sendNext()
            }
            return
        }
        if stallPending, let stallAt = plan.stallAt, sent == stallAt {
            stallPending = false
            // What is queued goes out before the pause: a stall at byte 0 still sends the head.
            context.flush()
            onStall()
            // Without a duration the stall lasts until the client gives up or the server stops.
            guard let duration = plan.stallDuration else { return }
            timer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(duration)) {
                self.restartPacing()
                self.sendNext()
            }
            return
        }
        if let dropAfter = plan.dropAfter, sent == dropAfter {
            onEnd(.closeConnection)
            return
        }
        if sent == length {
            onEnd(plan.closeWhenDone ? .closeConnection : .complete)
            return
        }

        let count = Int(nextChunkLength())
        guard let chunk = nextChunk(count) else {
            // The encoding failed or ended short of its measured length: a truncated body, as a
            // server that fails half-way sends it.
            onEnd(.closeConnection)
            return
        }
        sent += Int64(count)
        // Counted before the write, so a client that has read the bytes finds them in the log. A
        // write that fails (the client hung up) may have sent part of its chunk: it stays counted.
        onBytesWritten(sent)
        context.writeAndFlush(NIOAny(HTTPServerResponsePart.body(.byteBuffer(chunk))))
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success: self.scheduleNextChunk()
                case .failure: self.cancel() // the client went away
                }
            }
    }

    private func nextChunk(_ count: Int) -> ByteBuffer? {
        let allocator = context.channel.allocator
        switch source {
        case .identity(let fixture, let firstOffset):
            var chunk = allocator.buffer(capacity: count)
            chunk.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { space in
                fixture.fill(UnsafeMutableRawBufferPointer(rebasing: space[0..<count]), from: firstOffset + sent)
                return count
            }
            return chunk
        case .gzip(let stream):
            guard let chunk = try? stream.read(count, allocator: allocator), chunk.readableBytes == count else { return nil }
            return chunk
        }
    }

    /// Stops exactly at the next fault offset, so "drop after N bytes" means N, not N rounded up to a chunk.
    private func nextChunkLength() -> Int64 {
        var count = min(Self.chunkSize, length - sent)
        if stallPending, let stallAt = plan.stallAt {
            count = min(count, stallAt - sent)
        }
        if let dropAfter = plan.dropAfter {
            count = min(count, dropAfter - sent)
        }
        if nextPause < plan.pauses.count {
            count = min(count, plan.pauses[nextPause].at - sent)
        }
        if let rate = plan.bytesPerSecond {
            count = min(count, max(1, rate / Self.throttleSlicesPerSecond))
        }
        return count
    }

    private func scheduleNextChunk() {
        guard !isCancelled else { return }
        let eventLoop = context.eventLoop.assumeIsolated()
        if let rate = plan.bytesPerSecond {
            let seconds = Double(sent - bytesSentAtPaceStart) / Double(rate)
            let due = paceStart + .nanoseconds(Int64(seconds * 1_000_000_000))
            timer = eventLoop.scheduleTask(deadline: due) { self.sendNext() }
        } else if let gap = plan.writeGap {
            timer = eventLoop.scheduleTask(in: TimeAmount(gap)) { self.sendNext() }
        } else {
            // A write can complete synchronously; going through the loop keeps the stack flat
            // instead of recursing once per chunk.
            eventLoop.execute { self.sendNext() }
        }
    }

    private func restartPacing() {
        paceStart = .now()
        bytesSentAtPaceStart = sent
    }
}
