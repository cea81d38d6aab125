import Foundation
import LabVocabulary

// Telling threads apart, for the lessons that show which thread a callback ran on.

/// Names the calling thread. On Darwin, `Thread.current.name = name` does it. On Linux that
/// setter is unreliable: a name set before `start()` is dropped, one set first thing inside the
/// thread can be dropped too (it races with `start()`), and one over 15 bytes is refused. The
/// kernel takes the name from /proc instead.
public func nameThisThread(_ name: String) {
    #if canImport(Darwin)
    Thread.current.name = name
    #else
    try? name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
    #endif
}

/// "'lab.case-a' (tid 4242)": the thread's name and the kernel's id for it.
public func currentThread() -> String {
    let name = Thread.isMainThread ? "main" : Thread.current.name ?? ""
    return "'\(name.isEmpty ? "unnamed" : name)' (tid \(ThreadCensus.currentID))"
}

/// The process's threads, as the kernel lists them in /proc/self/task.
public enum ThreadCensus {
    /// The calling thread's kernel id.
    public static var currentID: Int {
        // /proc/thread-self links to <pid>/task/<tid>.
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return Int(link.split(separator: "/").last ?? "") ?? -1
    }

    /// Whether all these threads have ended, waiting up to a second for them to go.
    public static func exited(_ ids: [Int]) -> Bool {
        let deadline = Date(timeIntervalSinceNow: 1)
        repeat {
            if ids.allSatisfy({ !FileManager.default.fileExists(atPath: "/proc/self/task/\($0)") }) { return true }
            Thread.sleep(forTimeInterval: 0.005)
        } while Date() < deadline
        return false
    }
}
