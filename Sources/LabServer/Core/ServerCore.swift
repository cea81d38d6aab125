import NIOCore
import NIOPosix
import Synchronization

/// State shared by all connections of one server. Connections run on several event-loop
/// threads, so every mutable part sits behind its own lock.
final class ServerCore: Sendable {
    /// Hashing a large fixture takes seconds; it runs there so no event loop stalls.
    let digests = DigestWork()

    private let attemptCounters = Mutex<[String: Int]>([:])
    private let log = Mutex<[LoggedRequest]>([])
    private let stopping = Mutex(false)

    // MARK: Attempts

    /// The attempt a request plays. A GET takes the next one; a HEAD only previews it;
    /// a pinned request (`attempt=N`) never moves the counter.
    func attempt(for request: FixtureRequest, advancing: Bool) -> Int {
        if let pinned = request.pinnedAttempt {
            return pinned
        }
        return attemptCounters.withLock { counters in
            let next = counters[request.attemptKey, default: 0] + 1
            if advancing {
                counters[request.attemptKey] = next
            }
            return next
        }
    }

    // MARK: Request log

    var requestLog: [LoggedRequest] {
        log.withLock { $0 }
    }

    /// Returns the entry's index, for `recordBodyBytes`.
    func record(_ entry: LoggedRequest) -> Int {
        log.withLock { entries in
            entries.append(entry)
            return entries.count - 1
        }
    }

    func recordBodyBytes(_ bytes: Int64, at index: Int) {
        log.withLock { $0[index].bodyBytesSent = bytes }
    }

    // MARK: Stopping

    var isStopping: Bool {
        stopping.withLock { $0 }
    }

    /// True for the first caller only, which makes `stop()` idempotent.
    func beginStopping() -> Bool {
        stopping.withLock { stopping in
            defer { stopping = true }
            return !stopping
        }
    }
}
