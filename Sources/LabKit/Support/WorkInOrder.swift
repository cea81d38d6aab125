import Dispatch
import Foundation
import Synchronization

/// Items worked on `width` at a time, each on a thread of its own, their outputs handed back in
/// the items' order as each is ready: for work that is mostly waiting on a child process, whose
/// results a person reads in a fixed order (`lab exercise check`'s lines, the tests' pasted
/// commands). The work is told whether an earlier item asked for the rest to stop, so a program
/// that hangs costs one timeout, not one per item still to start.
public enum WorkInOrder {
    /// Runs `work` on every item and calls `each` on the calling thread, in the items' order.
    /// `work` returns its output and whether the items not yet started should stop.
    public static func run<Item: Sendable, Output: Sendable>(
        _ items: [Item], width: Int,
        work: @escaping @Sendable (_ item: Item, _ stopped: Bool) -> (output: Output, stopsTheRest: Bool),
        each: (Output) -> Void
    ) {
        let board = Board<Output>(count: items.count)
        for _ in 0..<min(width, items.count) {
            Thread {
                while let (index, stopped) = board.claim() {
                    let (output, stops) = work(items[index], stopped)
                    board.finish(index, with: output, stopping: stops)
                }
            }.start()
        }
        for index in items.indices { each(board.wait(for: index)) }
    }
}

/// Which item is next, whether the rest should stop, and each output once it is ready.
private final class Board<Output: Sendable>: Sendable {
    private let state: Mutex<(next: Int, stopped: Bool, outputs: [Output?])>
    private let ended: [DispatchSemaphore]

    init(count: Int) {
        state = Mutex((0, false, Array(repeating: nil, count: count)))
        ended = (0..<count).map { _ in DispatchSemaphore(value: 0) }
    }

    func claim() -> (index: Int, stopped: Bool)? {
        state.withLock { state in
            guard state.next < state.outputs.count else { return nil }
            defer { state.next += 1 }
            return (state.next, state.stopped)
        }
    }

    func finish(_ index: Int, with output: Output, stopping: Bool) {
        state.withLock { state in
            state.outputs[index] = output
            state.stopped = state.stopped || stopping
        }
        ended[index].signal()
    }

    func wait(for index: Int) -> Output {
        ended[index].wait()
        return state.withLock { $0.outputs[index]! }
    }
}
