import Foundation
import LabPlatform
import LabVocabulary

// Telling threads apart, for the lessons that show which thread a callback ran on.

/// Names the calling thread, so the story can say which thread ran a callback.
public func nameThisThread(_ name: String) { Platform.nameCurrentThread(name) }

/// "'lab.case-a' (tid 4242)": the thread's name and the kernel's id for it.
public func currentThread() -> String {
    let name = Thread.isMainThread ? "main" : Thread.current.name ?? ""
    return "'\(name.isEmpty ? "unnamed" : name)' (tid \(ThreadCensus.currentID))"
}

/// The global queue whose worker is running the calling thread's work, such as
/// "com.apple.root.default-qos", even from inside a run loop that work runs; or, for a run loop
/// run inside a queue's work that the work of a GCD worker entered (a `sync` on a queue of the
/// app's own hides the global label), "'that queue', inside a GCD worker's work". nil on the main
/// thread, on a thread of its own, and on a serial queue of the app's own, whose work runs on an
/// overcommitting thread of its own in effect (docs/exercises.md).
public func globalQueueWorker() -> String? {
    let label = Platform.currentDispatchQueueLabel
    if label.hasPrefix("com.apple.root.") && !label.hasSuffix(".overcommit") { return label }
    guard RunLoop.current.currentMode != nil, Platform.dispatchWorkNesting >= 2 else { return nil }
    return "'\(label)', inside a GCD worker's work"
}

/// The process's threads, as the kernel knows them.
public enum ThreadCensus {
    /// The calling thread's kernel id.
    public static var currentID: Int { Platform.currentThreadID }

    /// Whether all these threads have ended, waiting up to a second for them to go.
    public static func exited(_ ids: [Int]) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 1)
        repeat {
            if ids.allSatisfy(Platform.threadHasEnded) { return true }
            Thread.sleep(forTimeInterval: 0.005)
        } while Date() < deadline
        return false
    }
}
