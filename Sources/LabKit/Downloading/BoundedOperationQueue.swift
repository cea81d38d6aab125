import Foundation

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
/// The block form `addOperation(_:)` funnels into `addOperation(_: Operation)` in
/// swift-corelibs-foundation, so overriding that one method bounds both.
public final class BoundedOperationQueue: OperationQueue, @unchecked Sendable {
    // @unchecked: OperationQueue is an open Foundation class that is not Sendable; the only
    // state added here is a DispatchSemaphore, which is thread-safe.
    private let freeSlots: DispatchSemaphore

    public init(capacity: Int) {
        freeSlots = DispatchSemaphore(value: capacity)
        super.init()
        maxConcurrentOperationCount = 1
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
}
