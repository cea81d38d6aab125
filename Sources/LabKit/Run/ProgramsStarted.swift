import Foundation
import LabPlatform
import Synchronization

/// Whether the lesson's code started a program: an iOS app cannot, so a lesson whose work is done
/// by curl or another child proves nothing of the app's own code, however right the bytes are.
///
/// A process asks the system about its own children (`hasStartedAChild()`). Where the
/// lab starts processes of its own (lesson 10's later launches, lesson 09's phone), what the code
/// had started is read before the first of them, and each of those processes tells its own.
public enum ProgramsStarted {
    private struct State {
        var seen = false
        var labHasStartedOne = false
    }
    private static let state = Mutex(State())

    /// Called just before the lab starts a process of its own here. From then on this process's
    /// children are the lab's too, so only what was seen until now, and what other processes
    /// tell, counts.
    package static func beforeTheLabStartsAProcess() {
        state.withLock { state in
            guard !state.labHasStartedOne else { return }
            state.seen = state.seen || hasStartedAChild()
            state.labHasStartedOne = true
        }
    }

    /// What a process the lab started says its code did.
    package static func note(startedElsewhere: Bool) {
        state.withLock { $0.seen = $0.seen || startedElsewhere }
    }

    /// Whether the code started a program, in this process or in one that told this one.
    package static var byTheCode: Bool {
        state.withLock { state in state.seen || (!state.labHasStartedOne && hasStartedAChild()) }
    }

    /// Whether this process has started a child: one that ended and was waited for (Foundation's
    /// `Process.waitUntilExit()` waits), one not yet waited for, or any, if children would go
    /// unseen by both.
    static func hasStartedAChild() -> Bool {
        Platform.endedChildrenPeakRSS() > 0 || hasChildrenNotWaitedFor() || Platform.childrenAreReapedUnseen()
    }

    /// Whether a child not yet waited for exists, running or ended: waitid(2) with `WNOHANG`
    /// finds one, and `WNOWAIT` leaves it to be waited for. Spelled alike on Linux and Darwin.
    private static func hasChildrenNotWaitedFor() -> Bool {
        var info = siginfo_t()
        return waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) == 0
    }
}
