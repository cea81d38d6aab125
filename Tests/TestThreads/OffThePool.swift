import Foundation

/// Where a test that blocks does its waiting. Swift Testing runs tests on the concurrency pool,
/// one thread per core: two here. A test that blocks there (on a child process, a socket, the
/// exercise folders' lock) holds one of the two while it waits, and the suite runs one test
/// beside it. Measured on 2 cores, the suite's tests spent about half their time waiting this way.
///
/// `OffThePool.run` runs a test's blocking body on a thread of its own, as part of the same task
/// (a task executor preference), so the test's expectations still count for it; at most `lanes`
/// such bodies run at once, beside the pool's threads. `OffThePool.runWaitingForALock` has no
/// lane: its body spends its wait on a lock that lets one test in at a time.
public enum OffThePool {
    /// Bodies that block, running at once beside the pool: enough to fill the cores while the
    /// others wait on their children, few enough that no run is starved past its time limits.
    public static let lanes = 2

    public static func run<T>(_ body: () throws -> T) async throws -> T {
        await freeLanes.take()
        let result = await withTaskExecutorPreference(OwnThreads.shared) { Result { try body() } }
        await freeLanes.give()
        return try result.get()
    }

    public static func runWaitingForALock<T>(_ body: () throws -> T) async throws -> T {
        try await withTaskExecutorPreference(OwnThreads.shared) { try body() }
    }

    private static let freeLanes = Lanes(count: lanes)
}

/// A task executor that runs each job on a new thread: a job that blocks holds only its own.
private final class OwnThreads: TaskExecutor, Sendable {
    static let shared = OwnThreads()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread { job.runSynchronously(on: executor) }
        // The tests' recursion (a JSON decoder, a regex) wants more than a secondary thread's default.
        thread.stackSize = 8 << 20
        thread.start()
    }
}

/// A counting semaphore for tasks: waiting suspends, it holds no thread.
private actor Lanes {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { free = count }

    func take() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
