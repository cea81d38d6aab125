import Foundation
import LabCatalogue
import LabHarness
import LabKit
import LabPlatform
import LabReport
import LabVocabulary
import Synchronization

/// One child process, measured the way the kernel sees it: CPU time and peak RSS from `wait4`'s
/// rusage, and resident memory sampled while it runs (the platform seam reads it). The child is
/// started through `lab-measure`, which does the `wait4` (its doc comment says why). Output goes
/// to files, so a chatty child never blocks on a full pipe.
struct MeasuredProcess {
    struct Finished {
        /// The exit status, or nil when a signal ended the process.
        var exitCode: Int32?
        var signal: Int32?
        var wallSeconds: Double
        var cpuSeconds: Double
        var peakRSSBytes: Int64
        var timeline: [ComparisonResults.RSSSample]
        /// Seconds since 1970 when the process was started.
        var startedAt: Double
        /// The bytes under `watchedOutput` while it ran; empty when nothing was watched.
        var disk: [ComparisonResults.DiskSample] = []
        var stdout: String
        var stderr: String
        var timedOut: Bool

        /// This run with `earlier`, the same command's run before it, counted in: their times
        /// added, the higher peak. Its output and ending stay this run's.
        func after(_ earlier: Finished) -> Finished {
            var both = self
            both.wallSeconds += earlier.wallSeconds
            both.cpuSeconds += earlier.cpuSeconds
            both.peakRSSBytes = max(peakRSSBytes, earlier.peakRSSBytes)
            return both
        }

        /// How the run ended, for the catalogue: a run that passed its `--max-time` ended itself
        /// just before the lab would have stopped it, and counts as timed out too.
        func ending(record: LessonResult?, timeout: Duration) -> Observation.Ending {
            timedOut || record?.outcome == .timedOut ? .timedOut(seconds: Int(timeout.seconds))
                : signal.map { .signal($0) } ?? .exited(exitCode ?? -1)
        }
    }

    /// 100 samples a second: a 32 MiB download lasts a few tenths of a second, and a copy of
    /// the whole body in memory lives for even less.
    static let sampleInterval: Duration = .milliseconds(10)

    /// `lab-measure`, built next to `lab`.
    static let launcher = Platform.productsFolder.appendingPathComponent("lab-measure")

    let program: URL
    let arguments: [String]
    var environment: [String: String] = ProcessInfo.processInfo.environment
    /// Where stdout, stderr and the launcher's report are kept.
    let outputFolder: URL
    var timeout: Duration = .seconds(300)
    /// The child's stderr goes to this process's own, for a person to watch, instead of a file.
    var passesStderrThrough = false
    /// A file or folder whose bytes are sampled with the memory, for a run's picture.
    var watchedOutput: URL?

    /// The bytes of `url`, a file, or the regular files under it, a folder; 0 when it is missing.
    static func bytes(at url: URL) -> Int64 {
        if let written = writtenBytes(of: url) { return written }
        guard let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey]) else { return 0 }
        return walker.compactMap { ($0 as? URL).flatMap(writtenBytes(of:)) }.reduce(0, +)
    }

    /// A regular file's bytes that have been written: its size, or less where it has holes. A file
    /// made at its full size before its ranges come (lesson 11) has the blocks it was written
    /// into, not its length. nil for anything but a regular file.
    private static func writtenBytes(of url: URL) -> Int64? {
        var status = stat()
        guard lstat(url.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return min(Int64(status.st_size), Int64(status.st_blocks) * 512)
    }

    /// Runs the process to its end. `killWhen` is asked at every sample; once it says yes the
    /// process gets SIGKILL, as a user force-quitting an app would.
    func run(killWhen: () -> Bool = { false }) throws -> Finished {
        let stdoutFile = outputFolder.appendingPathComponent("stdout")
        let stderrFile = outputFolder.appendingPathComponent("stderr")
        let reportFile = outputFolder.appendingPathComponent("rusage")
        let launcherPID = try spawn(arguments: [reportFile.path, program.path] + arguments,
                                    stdout: stdoutFile, stderr: stderrFile)
        let started = ContinuousClock.now
        let startedAt = Date().timeIntervalSince1970
        let exit = ExitWatch(pid: launcherPID)

        var timeline: [ComparisonResults.RSSSample] = []
        var disk: [ComparisonResults.DiskSample] = []
        var childPID: pid_t?
        var killed = false, timedOut = false
        while exit.reaped == nil {
            let elapsed = ContinuousClock.now - started
            childPID = childPID ?? Self.reportedPID(in: reportFile)
            if let childPID {
                if let rss = Platform.residentBytes(ofProcess: childPID) {
                    timeline.append(.init(t: elapsed.seconds, rssBytes: rss))
                }
                if let watchedOutput { disk.append(.init(t: elapsed.seconds, bytes: Self.bytes(at: watchedOutput))) }
                if !killed, elapsed > timeout || killWhen() {
                    timedOut = elapsed > timeout
                    killed = true
                    kill(childPID, SIGKILL)
                }
            }
            Thread.sleep(forTimeInterval: Self.sampleInterval.seconds)
        }
        let stderr = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
        guard let usage = Self.reportedUsage(in: reportFile) else {
            throw CompareError("cannot measure \(program.lastPathComponent): "
                + (stderr.split(separator: "\n").last.map(String.init) ?? "lab-measure reported nothing"))
        }
        let exited = usage.status & 0x7f == 0
        return Finished(
            exitCode: exited ? (usage.status >> 8) & 0xff : nil,
            signal: exited ? nil : usage.status & 0x7f,
            wallSeconds: usage.wall,
            cpuSeconds: usage.cpu,
            peakRSSBytes: Platform.residentBytes(fromMaxRSS: usage.maxRSS),
            timeline: timeline,
            startedAt: startedAt,
            disk: disk + (watchedOutput.map { [.init(t: usage.wall, bytes: Self.bytes(at: $0))] } ?? []),
            stdout: (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "",
            stderr: stderr,
            timedOut: timedOut
        )
    }

    private static func reportedPID(in file: URL) -> pid_t? {
        guard let text = try? String(contentsOf: file, encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("pid ")
        else { return nil }
        return pid_t(line.dropFirst(4))
    }

    private static func reportedUsage(in file: URL) -> (status: Int32, maxRSS: Int64, cpu: Double, wall: Double)? {
        guard let text = try? String(contentsOf: file, encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("status ") })
        else { return nil }
        let words = line.split(separator: " ")
        func value(_ key: String) -> Substring? {
            words.firstIndex(of: Substring(key)).flatMap { words.indices.contains($0 + 1) ? words[$0 + 1] : nil }
        }
        guard let status = value("status").flatMap({ Int32($0) }), let maxRSS = value("maxrss").flatMap({ Int64($0) }),
              let user = value("utime").flatMap({ Double($0) }), let system = value("stime").flatMap({ Double($0) }),
              let wall = value("wall").flatMap({ Double($0) })
        else { return nil }
        return (status, maxRSS, user + system, wall)
    }

    private func spawn(arguments: [String], stdout: URL, stderr: URL) throws -> pid_t {
        var actions = Platform.makeSpawnFileActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if !passesStderrThrough {
            posix_spawn_file_actions_addopen(&actions, 2, stderr.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }

        let argv = ([Self.launcher.path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, Self.launcher.path, &actions, nil, argv, envp)
        guard result == 0 else {
            throw CompareError("cannot start \(Self.launcher.path): \(String(cString: strerror(result)))")
        }
        return pid
    }

}

/// Waits for the launcher on a thread of its own, so the sampling loop never blocks.
private final class ExitWatch: Sendable {
    private let state = Mutex<Int32?>(nil)

    init(pid: pid_t) {
        Thread { self.waitForExit(of: pid) }.start()
    }

    private func waitForExit(of pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        state.withLock { $0 = status }
    }

    /// The launcher's wait status, once it has ended.
    var reaped: Int32? { state.withLock { $0 } }
}

/// A problem that stops `lab compare`, told in one line.
struct CompareError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
