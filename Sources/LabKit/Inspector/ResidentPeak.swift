import Foundation
import LabPlatform
import Synchronization

/// The most memory the process held at its network events: each request, each response, each
/// failure, and each MiB of a body received or sent; shared memory the process maps counts whole
/// (`Platform.heldBytes`), whatever madvise has taken out of the resident count. The kernel's own peak (VmHWM, wait4's `ru_maxrss`) can be reset by the
/// process on Linux (proc(5), `clear_refs`), so the record's peak is the higher of the two: a body
/// held whole in memory is resident when its answer arrives, whatever the code does afterwards.
package enum ResidentPeak {
    private static let highest = Atomic<Int64>(0)
    private static let beforeTheCode = Atomic<Int64>(0)

    /// What is resident now, if it is more than was seen before.
    static func sample() {
        guard let now = Platform.heldBytes(ofProcess: getpid()) else { return }
        var seen = highest.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = highest.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if exchanged { return }
            seen = original
        }
    }

    /// Notes what the process holds before the lesson's code first runs: the lab's part of every
    /// peak, which a memory check's baseline cannot be raised much past by the code (docs/exercises.md).
    package static func noteBeforeTheCode() {
        beforeTheCode.store(Platform.heldBytes(ofProcess: getpid()) ?? 0, ordering: .relaxed)
    }

    /// What was resident before the lesson's code ran; 0 where it was not noted.
    package static var heldBeforeTheCode: Int64 { beforeTheCode.load(ordering: .relaxed) }

    /// The highest seen so far; 0 before the first event.
    package static var seen: Int64 { highest.load(ordering: .relaxed) }
}
