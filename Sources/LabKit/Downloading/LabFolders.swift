import Foundation
import Synchronization

/// The lab's own folders under the temporary directory, one per user: students who share a
/// machine never read, overwrite or delete each other's files. Inside, each run of a lesson
/// without `--output` gets a folder of its own, so two runs at once never share a file either.
public enum LabFolders {
    /// `$TMPDIR/download-lab-<uid>`: made on first use, readable by its owner only. Read once:
    /// a lesson that gives Foundation a temporary folder of its own (08) changes `TMPDIR` later.
    /// An empty `TMPDIR` means none: /tmp, not the root of the file system.
    public static let mine = systemTemporary(in: ProcessInfo.processInfo.environment)
        .appendingPathComponent("download-lab-\(getuid())", isDirectory: true)

    /// The temporary folder `environment` gives: the run's own (`runsTemporaryFolder`), else
    /// `TMPDIR`, else /tmp. Read here, on every system, never through Foundation's
    /// `temporaryDirectory`: on a Mac that asks `confstr(_CS_DARWIN_USER_TEMP_DIR)` first and
    /// reads `TMPDIR` only when it fails (swift-corelibs-foundation and swift-foundation,
    /// `NSTemporaryDirectory`), so a child given a `TMPDIR` would write elsewhere.
    package static func systemTemporary(in environment: [String: String]) -> URL {
        let given = [environment[runsTemporaryFolder], environment["TMPDIR"]].compactMap { $0 }.first { !$0.isEmpty }
        return URL(fileURLWithPath: given ?? "/tmp", isDirectory: true).standardizedFileURL
    }

    /// The temporary folder the run was given, kept here when a lesson gives the app's code one
    /// of its own in `TMPDIR` (lesson 10's container tmp), for the processes it starts.
    package static let runsTemporaryFolder = "DOWNLOAD_LAB_TMPDIR"

    /// Where download tasks keep their temporary files: the app's tmp folder, in iOS terms.
    public static var temporary: URL { mine.appendingPathComponent("tmp", isDirectory: true) }

    /// Makes `mine` (mode 0700) if it is missing. One that is not a directory of this user's,
    /// a link, or one that others may write, is refused: files are never put where another
    /// user could read or replace them.
    public static func makeMine() throws {
        let folder = mine
        // The temporary directory itself may be missing when TMPDIR names a new folder.
        try? FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        if mkdir(folder.path, 0o700) != 0, errno != EEXIST {
            throw DownloadError.localIO(path: folder.path, reason: "cannot create the lab's folder: \(String(cString: strerror(errno)))")
        }
        var facts = stat()
        guard lstat(folder.path, &facts) == 0, facts.st_mode & S_IFMT == S_IFDIR, facts.st_uid == getuid(),
              facts.st_mode & 0o022 == 0
        else {
            throw DownloadError.localIO(path: folder.path, reason: "not a folder of this user's alone, so the lab does not use it")
        }
    }

    /// A folder inside `mine` (made if missing) for a subfolder of its own, e.g. `temporary`.
    public static func make(_ folder: URL) throws {
        try makeMine()
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw DownloadError.localIO(path: folder.path, reason: "cannot create the folder")
        }
    }

    /// A new folder for one run of `name`: `mine/<name>-<pid>`. The folders of earlier runs of
    /// `name` whose process has ended are removed first, so the lab keeps the last run's files
    /// to look at, not every run's.
    package static func forThisRun(_ name: String) throws -> URL {
        try makeMine()
        let prefix = name + "-"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: mine.path)) ?? [] where entry.hasPrefix(prefix) {
            guard let pid = pid_t(entry.dropFirst(prefix.count)), pid != getpid(), !isRunning(pid) else { continue }
            try? FileManager.default.removeItem(at: mine.appendingPathComponent(entry))
        }
        let folder = mine.appendingPathComponent(prefix + String(getpid()), isDirectory: true)
        try? FileManager.default.removeItem(at: folder)
        try make(folder)
        return folder
    }

    /// Removes `folder` when the process exits (`exit(3)` or the end of `main`): a run's scratch
    /// that nobody reads afterwards. A killed process leaves it, for the next run to remove.
    package static func removeAtExit(_ folder: URL) {
        removedAtExit.withLock { folders in
            if folders.isEmpty {
                atexit { for path in LabFolders.removedAtExit.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) } }
            }
            folders.append(folder.path)
        }
    }

    private static let removedAtExit = Mutex<[String]>([])

    /// Whether a process with this id exists (it may be another user's: then it is left alone too).
    private static func isRunning(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }
}
