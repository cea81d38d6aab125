import LabFixtures
import LabVocabulary
import NIOCore
import NIOPosix
import Synchronization

/// Something computed over a whole fixture, a slice at a time: its SHA-256, or its gzip length.
/// One thread at a time calls `advance(by:)`.
protocol FixtureComputation: AnyObject, Sendable {
    associatedtype Output: Sendable
    init(_ fixture: Fixture)
    var fixture: Fixture { get }
    /// Reads up to `bytes` more of the fixture; the output once the whole fixture is in.
    func advance(by bytes: Int64) -> Output?
    /// The output computed earlier in this process, if any.
    static func known(for fixture: Fixture) -> Output?
}

extension FixtureHasher: FixtureComputation {
    static func known(for fixture: Fixture) -> [UInt8]? { Fixture.cachedSHA256Digest(of: fixture) }
}

/// The digests the server publishes (`Repr-Digest`, `/fixtures/<name>.sha256`).
typealias DigestWork = FixtureWork<FixtureHasher>

/// Busy and Stopped do not depend on what is computed.
enum FixtureWorkError: Error {
    /// Too many large computations are under way.
    case busy
    /// The server stops.
    case stopped
}

/// Computes what the server needs to know of whole fixtures, for its clients: fairly, only while
/// someone waits, and a bounded number at a time.
///
/// - **Fair.** Each computation reads one slice (4 MiB) and then goes to the back of the queue
///   of its two threads, so computations take turns: a small fixture's digest is ready after a
///   few slices however many large ones are under way. No client waits behind another's.
/// - **Only while someone waits.** Each computation counts the connections waiting for it; a
///   connection that closes stops waiting, and a computation nobody waits for is dropped before
///   its next slice.
/// - **Bounded.** At most `maximumComputations` of fixtures larger than `smallFixtureBytes` run
///   at once; asking for one more fails with `FixtureWorkError.busy` (the server answers 503,
///   goes without, or asks again shortly) until one ends. A small fixture is never refused: it
///   takes a few slices.
final class FixtureWork<Computation: FixtureComputation>: Sendable {
    // Computed: a generic class cannot store static properties.
    static var sliceBytes: Int64 { 4 << 20 }
    static var smallFixtureBytes: Int64 { 16 << 20 }
    static var maximumComputations: Int { 8 }

    private let threads: NIOThreadPool
    private let state = Mutex(State())

    private struct Waiter {
        let id: Int
        let promise: EventLoopPromise<Computation.Output>
    }

    /// What a request for an output leads to.
    private enum Next { case refuse(any Error), wait(Int), start(Computation, Int) }

    private struct State {
        var computations: [Fixture: (computation: Computation, waiters: [Waiter])] = [:]
        var nextWaiterID = 0
        var stopped = false
    }

    init() {
        threads = NIOThreadPool(numberOfThreads: 2)
        threads.start()
    }

    /// The output for `fixture`, for the client on `channel`: at once if known, else when
    /// computed. Fails with `.busy` when too many computations run, and with `.stopped` when
    /// the server stops first. Closing `channel` withdraws the request.
    func output(for fixture: Fixture, for channel: any Channel) -> EventLoopFuture<Computation.Output> {
        if let known = Computation.known(for: fixture) {
            return channel.eventLoop.makeSucceededFuture(known)
        }
        let promise = channel.eventLoop.makePromise(of: Computation.Output.self)
        let next: Next = state.withLock { state in
            guard !state.stopped else { return .refuse(FixtureWorkError.stopped) }
            let id = state.nextWaiterID
            state.nextWaiterID += 1
            if state.computations[fixture] != nil {
                state.computations[fixture]!.waiters.append(Waiter(id: id, promise: promise))
                return .wait(id)
            }
            let large = state.computations.keys.filter { $0.size > Self.smallFixtureBytes }.count
            guard fixture.size <= Self.smallFixtureBytes || large < Self.maximumComputations else {
                return .refuse(FixtureWorkError.busy)
            }
            let computation = Computation(fixture)
            state.computations[fixture] = (computation, [Waiter(id: id, promise: promise)])
            return .start(computation, id)
        }
        switch next {
        case .refuse(let error):
            promise.fail(error)
            return promise.futureResult
        case .wait(let id):
            withdraw(id, from: fixture, when: channel)
        case .start(let computation, let id):
            withdraw(id, from: fixture, when: channel)
            schedule(computation)
        }
        return promise.futureResult
    }

    /// How many computations are under way: for tests that check that abandoned ones are dropped.
    var computationsUnderWay: Int { state.withLock { $0.computations.count } }

    /// Fails every waiting request and drops every computation; later requests fail at once.
    func stop() {
        failEveryWaiter()
        try? threads.syncShutdownGracefully()
    }

    /// `stop` for async code.
    func stop() async {
        failEveryWaiter()
        try? await threads.shutdownGracefully()
    }

    private func failEveryWaiter() {
        let waiters = state.withLock { state in
            state.stopped = true
            defer { state.computations.removeAll() }
            return state.computations.values.flatMap(\.waiters)
        }
        for waiter in waiters { waiter.promise.fail(FixtureWorkError.stopped) }
    }

    private func withdraw(_ id: Int, from fixture: Fixture, when channel: any Channel) {
        channel.closeFuture.whenComplete { [self] _ in
            let withdrawn: Waiter? = state.withLock { state in
                guard var entry = state.computations[fixture],
                      let index = entry.waiters.firstIndex(where: { $0.id == id })
                else { return nil }
                let waiter = entry.waiters.remove(at: index)
                // Nobody waits any more: the computation is dropped before its next slice.
                state.computations[fixture] = entry.waiters.isEmpty ? nil : entry
                return waiter
            }
            withdrawn?.promise.fail(ChannelError.ioOnClosedChannel)
        }
    }

    /// Queues the computation's next slice behind every other computation's.
    private func schedule(_ computation: Computation) {
        threads.submit { [self] threadState in
            guard threadState == .active else { return }
            slice(computation)
        }
    }

    private func slice(_ computation: Computation) {
        let fixture = computation.fixture
        let wanted = state.withLock { $0.computations[fixture]?.computation === computation }
        guard wanted else { return }
        guard let output = computation.advance(by: Self.sliceBytes) else {
            return schedule(computation)
        }
        let waiters: [Waiter] = state.withLock { state in
            guard state.computations[fixture]?.computation === computation else { return [] }
            return state.computations.removeValue(forKey: fixture)?.waiters ?? []
        }
        for waiter in waiters { waiter.promise.succeed(output) }
    }
}
