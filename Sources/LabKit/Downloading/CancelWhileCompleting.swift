import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Keeps `cancel()` away from a task that is completing.
///
/// Foundation on Linux stops the program ("Trying to access a behaviour for a task that in not in
/// the registry") when a task's `cancel()` lands while the task completes on its own: after its
/// last delegate call was queued, before that call has marked it completed. The cancel's second
/// half then looks the task up after the registry has dropped it. A cancel that waits behind a
/// busy work queue lands just as the body ends, which is that moment.
///
/// So `cancelAtOnce()` asks for the cancel through here, and a LabKit delegate calls
/// `completionBegins(_:)` first thing in `didCompleteWithError`: it waits until every cancel
/// already asked for has landed, and keeps new ones from starting. Delegates outside LabKit are
/// covered in part: a cancel is skipped once the task reports itself completed.
enum CancelWhileCompleting {
    private struct Entry: Sendable {
        let task: URLSessionTask  // held, so that its identifier names no other task meanwhile
        var cancelsInFlight = 0
        var completing = false
        let landed = DispatchGroup()
    }
    private static let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    /// Runs `cancel` on another thread, unless the task is completing. `cancel` decides itself
    /// whether Foundation's `cancel()` is still needed (`isCompleting` tells it).
    static func cancel(_ task: URLSessionTask, _ cancel: @escaping @Sendable () -> Void) {
        let key = ObjectIdentifier(task)
        let landed: DispatchGroup? = entries.withLock { entries in
            var entry = entries[key] ?? Entry(task: task)
            guard !entry.completing else { return nil }
            entry.cancelsInFlight += 1
            entry.landed.enter()
            entries[key] = entry
            return entry.landed
        }
        guard let landed else { return }
        DispatchQueue.global().async {
            cancel()
            entries.withLock { entries in
                guard var entry = entries[key] else { return }
                entry.cancelsInFlight -= 1
                entries[key] = entry.cancelsInFlight == 0 && !entry.completing ? nil : entry
            }
            landed.leave()
        }
    }

    /// True once the task completed, or its LabKit delegate began to complete it.
    static func isCompleting(_ task: URLSessionTask) -> Bool {
        entries.withLock { $0[ObjectIdentifier(task)]?.completing ?? false } || task.state == .completed
    }

    /// Called by a LabKit delegate as `didCompleteWithError` begins: no cancel starts from now
    /// on, and one already asked for lands before this returns.
    static func completionBegins(_ task: URLSessionTask) {
        let key = ObjectIdentifier(task)
        let inFlight: DispatchGroup? = entries.withLock { entries in
            var entry = entries[key] ?? Entry(task: task)
            entry.completing = true
            entries[key] = entry
            return entry.cancelsInFlight > 0 ? entry.landed : nil
        }
        // Foundation marks the task completed as soon as the delegate returns; then the entry may go.
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) {
            entries.withLock { entries in
                if entries[key]?.cancelsInFlight == 0 { entries[key] = nil }
            }
        }
        guard let inFlight else { return }
        // Bounded, like every wait here: cancel() waits for the work queue, which never waits
        // for this delegate queue once the task's last call is on it.
        _ = inFlight.wait(timeout: .now() + 30)
        // cancel() only queues its work on newer Foundations: reading `priority` runs on the same
        // work queue, so once it returns the cancel's own lookup is queued ahead of the task's end.
        let barrier = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = task.priority
            barrier.signal()
        }
        _ = barrier.wait(timeout: .now() + 30)
    }
}
