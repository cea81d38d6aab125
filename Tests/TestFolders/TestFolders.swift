import Foundation

/// Where the tests write: one folder for this test process, under the system's temporary folder,
/// removed when the process exits, whatever the tests left in it (a failed test's files too). The
/// programs the tests start get it as their `TMPDIR` (`childEnvironment`), so what a lesson or
/// `lab` writes to its own temporary folders lands here as well.
public enum TestFolders {
    public static let root: URL = {
        let system = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let root = URL(fileURLWithPath: system, isDirectory: true).appendingPathComponent("lab-tests-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        atexit { TestFolders.removeRoot() }
        return root
    }()

    /// A fresh, empty folder for one test's files, inside `root`.
    public static func scratch(_ prefix: String = "lab-test") throws -> URL {
        let folder = root.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A path for one file inside `root`, not yet made.
    public static func file(_ prefix: String, _ suffix: String = "") -> URL {
        root.appendingPathComponent("\(prefix)-\(UUID().uuidString)\(suffix)")
    }

    /// This process's environment, with `TMPDIR` naming `root`, for a child process; `extra`
    /// goes over it.
    public static func childEnvironment(_ extra: [String: String] = [:]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(["TMPDIR": root.path]) { $1 }.merging(extra) { $1 }
    }

    private static func removeRoot() { try? FileManager.default.removeItem(at: root) }
}
