import Foundation
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
    /// Sealed keys and the fixture targets they stand for.
    private let sealed = Mutex([String: String]())
    /// The fixture GETs answering now, by attempt key (a URL and its run): what `connections:`
    /// counts. A key leaves when its last GET ends, so the connections open bound it.
    private let answering = Mutex([String: Int]())

    // MARK: Attempts

    /// The attempt a request plays. A GET takes the next one; a HEAD only previews it;
    /// a pinned request (`attempt=N`) never moves the counter.
    func attempt(for request: FixtureRequest, advancing: Bool) -> Int {
        if let pinned = request.pinnedAttempt {
            return pinned
        }
        return attemptCounters.withLock { $0.next(for: request.attemptKey, advancing: advancing) }
    }

    /// Runs whose program was killed at a stall: their later attempts play no `stall`, so the
    /// rerun is not stopped where the killed run was, whatever attempt it has reached.
    private let stallsOver = Mutex(Set<String>())

    func endStalls(run token: String) {
        stallsOver.withLock { _ = $0.insert(token) }
    }

    func stallsAreOver(for request: FixtureRequest) -> Bool {
        guard let run = request.run else { return false }
        return stallsOver.withLock { $0.contains(run) }
    }

    // MARK: GETs at once

    /// Counts one more GET of `key` answering, unless `limit` of them already are: false then.
    func claimAnswering(_ key: String, limit: Int?) -> Bool {
        answering.withLock { counts in
            if let limit, counts[key, default: 0] >= limit { return false }
            counts[key, default: 0] += 1
            return true
        }
    }

    func releaseAnswering(_ key: String) {
        answering.withLock { counts in
            let left = counts[key, default: 1] - 1
            counts[key] = left > 0 ? left : nil
        }
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
        let now = Date().timeIntervalSince1970
        log.withLock { $0.setBodyBytes(bytes, ofEntry: number, at: now) }
    }

    func recordStall(at number: Int) {
        log.withLock { $0.setStalled(ofEntry: number) }
    }

    // MARK: Sealed targets

    /// A new key that stands for `target` on this server.
    func seal(_ target: String) -> String {
        let key = UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        sealed.withLock { $0[key] = target }
        return key
    }

    /// The target a `/sealed/<key>/<name>` request stands for, with the request's own query
    /// items after the sealed ones (a client may add some); any other target as it is.
    func unsealed(_ target: String) -> String {
        let prefix = "/sealed/"
        guard target.hasPrefix(prefix) else { return target }
        let key = target.dropFirst(prefix.count).prefix { $0 != "/" && $0 != "?" }
        guard let stored = sealed.withLock({ $0[String(key)] }) else { return target }
        let added = target.firstIndex(of: "?").map { target[target.index(after: $0)...] } ?? ""
        return added.isEmpty ? stored : stored + "&" + added
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
