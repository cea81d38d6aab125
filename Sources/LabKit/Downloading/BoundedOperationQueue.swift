import Foundation
import LabVocabulary

/// A serial `OperationQueue` that holds at most `capacity` operations.
///
/// URLSession on Linux hands every received chunk to its delegate queue at once, whatever the
/// delegate's speed, so a slow delegate lets memory grow with the file. Making `addOperation`
/// wait for a free slot blocks the thread that delivers libcurl's data, libcurl stops reading,
/// and the TCP window closes: the sender slows down to the reader's pace.
///
/// The thread that waits here is the session's work queue, which `URLSessionTask.cancel()` also
/// needs: while the sender outpaces the delegate, a plain cancel lands only when the body has
/// ended. Stop such a task with `cancelAtOnce()`.
///
/// Every way in takes a slot: the block form is wrapped here, and a batch takes one slot per
/// operation, rather than trusting Foundation to route them through `addOperation(_: Operation)`
/// (swift-corelibs-foundation does; Apple documents no such thing). How Apple's URLSession hands
/// its delegate queue work is not public, so on a Mac this bound is unmeasured.
public final class BoundedOperationQueue: OperationQueue, @unchecked Sendable {
    // @unchecked: OperationQueue is an open Foundation class that is not Sendable; the state
    // added here is a DispatchSemaphore and a DispatchQueue, both thread-safe.
    private let freeSlots: DispatchSemaphore
    /// Kept here because `underlyingQueue` does not keep its queue alive on Linux.
    private let ownQueue: DispatchQueue?

    /// - Parameter ownQueueLabel: run the operations on a serial dispatch queue of their own,
    ///   for a delegate that may wait for long: GCD gives such a queue a thread of its own,
    ///   while a wait on its shared pool takes a thread that other work (Swift concurrency's
    ///   tasks among it) may need.
    public init(capacity: Int, ownQueueLabel: String? = nil) {
        freeSlots = DispatchSemaphore(value: capacity)
        ownQueue = ownQueueLabel.map { DispatchQueue(label: $0) }
        super.init()
        maxConcurrentOperationCount = 1
        underlyingQueue = ownQueue
    }

    public override func addOperation(_ operation: Operation) {
        freeSlots.wait()
        let slots = freeSlots
        let previousCompletion = operation.completionBlock
        operation.completionBlock = {
            previousCompletion?()
            slots.signal()
        }
        super.addOperation(operation)
    }

    #if canImport(FoundationNetworking)
    // Foundation on Linux declares the block @Sendable; SDKs before Apple's sendability audit of
    // NSOperation.h do not, and an override cannot match both. On a Mac the bound is unmeasured.
    public override func addOperation(_ block: @escaping @Sendable () -> Void) {
        addOperation(BlockOperation(block: block))
    }
    #endif

    public override func addOperations(_ operations: [Operation], waitUntilFinished wait: Bool) {
        for operation in operations { addOperation(operation) }
        if wait { for operation in operations { operation.waitUntilFinished() } }
    }
}
