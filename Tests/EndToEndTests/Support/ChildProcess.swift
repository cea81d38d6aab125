import Foundation
import TestFolders
import LabKit
import LabPlatform
import LabServer
import LabVocabulary

/// A built executable of this package, run as a real child process.
struct ChildProcess {
    struct Finished {
        let status: Int32
        let stdout: String
        let stderr: String
        /// Killed because it outlived its time limit.
        var timedOut = false

        /// The `--json` record, read from stdout as the lab reads it.
        func result() throws -> LessonResult {
            switch LessonResult.read(standardOutput: stdout) {
            case .record(let record): return record
            case .none: throw LabError("no record on standard output; stderr: \(stderr.suffix(300))")
            case .unreadable(let reason): throw LabError(reason)
            }
        }
    }

    /// The folder holding the test bundle also holds the package's executables.
    static let buildDirectory = Platform.productsFolder

    let process = Process()
    private let stdoutFile: URL
    private let stderrFile: URL

    /// One of this package's executables.
    init(_ executable: String, _ arguments: [String]) throws {
        try self.init(program: Self.buildDirectory.appendingPathComponent(executable), arguments)
    }

    init(program: URL, _ arguments: [String]) throws {
        process.executableURL = program
        process.arguments = arguments
        // Files rather than pipes: a chatty child can never block on a full pipe.
        let directory = try TestFolders.scratch("lab-e2e")
        stdoutFile = directory.appendingPathComponent("stdout")
        stderrFile = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: stdoutFile)
        process.standardError = try FileHandle(forWritingTo: stderrFile)
        process.standardInput = FileHandle.nullDevice
        // What the child writes to its temporary folders goes with the tests' own folder.
        process.environment = TestFolders.childEnvironment()
    }

    func start() throws { try process.run() }

    /// What the child has written to stdout so far, while it runs.
    var stdoutSoFar: String { (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "" }

    /// The same for stderr.
    var stderrSoFar: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    /// Kills the child and everything it started: a SIGKILLed `lab` cannot stop its own build or
    /// the program it was checking, which would otherwise run on beside the rest of the suite.
    func kill() {
        let tree = [process.processIdentifier] + Self.descendants(of: process.processIdentifier)
        for pid in tree { Foundation.kill(pid, SIGKILL) }
    }

    /// Every process below `pid`.
    static func descendants(of pid: Int32) -> [Int32] {
        var found: [Int32] = []
        var unvisited = [pid]
        while let next = unvisited.popLast() {
            let direct = Platform.children(of: next)
            found += direct
            unvisited += direct
        }
        return found
    }

    /// Waits for the child; kills it if it outlives `timeout` seconds.
    func wait(timeout: TimeInterval = 300) -> Finished {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        let timedOut = process.isRunning
        if timedOut { kill() }
        process.waitUntilExit()
        return Finished(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: stdoutFile, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "",
            timedOut: timedOut)
    }

    /// Runs one of this package's executables to the end.
    static func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 300) throws -> Finished {
        try runProgram(buildDirectory.appendingPathComponent(executable), arguments, timeout: timeout)
    }

    /// Runs any program to the end.
    static func runProgram(_ program: URL, _ arguments: [String], timeout: TimeInterval = 300) throws -> Finished {
        let child = try ChildProcess(program: program, arguments)
        try child.start()
        return child.wait(timeout: timeout)
    }
}

/// A lab server and a scratch folder, both gone when this is.
final class TestBench {
    let server: LabServer
    let directory: URL

    init() throws {
        server = try LabServer.start()
        directory = try scratchDirectory()
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// A fresh, empty folder for one test's files.
func scratchDirectory() throws -> URL {
    try TestFolders.scratch()
}

func fileSize(_ url: URL) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? -1
}
