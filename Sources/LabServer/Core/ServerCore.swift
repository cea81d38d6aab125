import LabFixtures
import LabVocabulary
import NIOCore
import NIOPosix
import Synchronization

/// State shared by all connections of one server. Connections run on several event-loop
/// threads, so every mutable part sits behind its own lock.
final class ServerCore: Sendable {
    /// Hashing a large fixture takes seconds; it runs there so no event loop stalls.
    let digests = DigestWork()
    /// The `gzip` fault's Content-Length: encoding a large fixture once takes seconds too.
    let gzipLengths = FixtureWork<GzipSizer>()

    private let attemptCounters = Mutex(AttemptCounters())
    private let log = Mutex(BoundedRequestLog())
    private let stopping = Mutex(false)

    // MARK: Attempts

    /// The attempt a request plays. A GET takes the next one; a HEAD only previews it;
    /// a pinned request (`attempt=N`) never moves the counter.
    func attempt(for request: FixtureRequest, advancing: Bool) -> Int {
        if let pinned = request.pinnedAttempt {
            return pinned
        }
        return attemptCounters.withLock { $0.next(for: request.attemptKey, advancing: advancing) }
    }

    // MARK: Request log

    var requestLog: [LoggedRequest] {
        log.withLock { $0.all }
    }

    /// Returns the entry's number, for `recordBodyBytes`.
    func record(_ entry: LoggedRequest) -> Int {
        log.withLock { $0.append(entry) }
    }

    func recordBodyBytes(_ bytes: Int64, at number: Int) {
        log.withLock { $0.setBodyBytes(bytes, ofEntry: number) }
    }

    func recordStall(at number: Int) {
        log.withLock { $0.setStalled(ofEntry: number) }
    }

    // MARK: Stopping

    /// True for the first caller only, which makes `stop()` idempotent.
    func beginStopping() -> Bool {
        stopping.withLock { stopping in
            defer { stopping = true }
            return !stopping
        }
    }
}
