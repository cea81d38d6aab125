import Foundation
import LabKit
import LabPlatform
import Testing

/// A `BoundedOperationQueue` takes a slot for every operation, whichever way it is added: the
/// thread that adds one more than it holds waits until one ends.
struct BoundedOperationQueueTests {
    @Test(arguments: ["operation", "batch"])
    func everyWayInWaitsForAFreeSlot(way: String) {
        waitsForAFreeSlot(way)
    }

    /// A block takes a slot where LabKit overrides `addOperation(_:)` for blocks: on Linux only,
    /// since the closure's `@Sendable` differs between the two Foundations' declarations.
    @Test(.enabled(if: Platform.isLinux, "BoundedOperationQueue's block override is compiled on Linux only; on a Mac the bound on blocks is unmeasured"))
    func aBlockWaitsForAFreeSlot() {
        waitsForAFreeSlot("block")
    }

    private func waitsForAFreeSlot(_ way: String) {
        let queue = BoundedOperationQueue(capacity: 2)
        let gate = DispatchSemaphore(value: 0)
        let added = DispatchSemaphore(value: 0)
        let adding = Thread {
            for _ in 0..<3 {
                switch way {
                case "operation": queue.addOperation(BlockOperation { gate.wait() })
                case "block": queue.addOperation { gate.wait() }
                default: queue.addOperations([BlockOperation { gate.wait() }], waitUntilFinished: false)
                }
                added.signal()
            }
        }
        adding.start()
        // Two fit; the third waits while the first still runs.
        #expect(added.wait(timeout: .now() + 5) == .success)
        #expect(added.wait(timeout: .now() + 5) == .success)
        #expect(added.wait(timeout: .now() + 0.3) == .timedOut, "\(way): a third operation went in past the bound")
        gate.signal()
        #expect(added.wait(timeout: .now() + 5) == .success, "\(way): a slot freed, and the third did not go in")
        gate.signal()
        gate.signal()
        queue.waitUntilAllOperationsAreFinished()
    }
}
