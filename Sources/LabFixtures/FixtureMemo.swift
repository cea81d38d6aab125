import Synchronization

/// What the server has worked out about fixtures (a digest, a compressed length), kept so the
/// work is done once. Everything in it can be worked out again, and a client can name endless
/// new fixtures, so once it holds `capacity` entries it forgets them all and starts afresh.
package final class FixtureMemo<Value: Sendable>: Sendable {
    private let entries = Mutex<[Fixture: Value]>([:])
    package let capacity: Int

    package init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    package subscript(fixture: Fixture) -> Value? {
        entries.withLock { $0[fixture] }
    }

    package func remember(_ value: Value, for fixture: Fixture) {
        entries.withLock { entries in
            if entries.count >= capacity, entries[fixture] == nil { entries.removeAll(keepingCapacity: true) }
            entries[fixture] = value
        }
    }

    package var count: Int { entries.withLock { $0.count } }
}
