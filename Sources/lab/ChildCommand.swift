import Foundation

/// The Swift toolchain on PATH, which `swift build` and `lab exercise check` use.
enum SwiftToolchain {
    /// "6.3", "6.1.2": from `swift --version`; nil when it does not answer.
    static func version() -> String? {
        guard let finished = try? ChildCommand.run(URL(fileURLWithPath: "/usr/bin/env"), ["swift", "--version"], timeout: .seconds(60)),
              finished.status == 0,
              let range = (finished.stdout + finished.stderr).range(of: #"Swift version [0-9][^ \n]*"#, options: .regularExpression)
        else { return nil }
        return String((finished.stdout + finished.stderr)[range].dropFirst("Swift version ".count))
    }
}

/// A short child process whose output is read whole, with a time limit after which it is stopped.
enum ChildCommand {
    struct Finished {
        var status: Int32
        var stdout: String
        var stderr: String
        var timedOut: Bool

        /// The last line it wrote to stderr, or to stdout: what went wrong, in its own words.
        var lastLine: String {
            (stderr.split(separator: "\n").last ?? stdout.split(separator: "\n").last).map(String.init) ?? "it said nothing"
        }
    }

    static func run(_ program: URL, _ arguments: [String], in folder: URL? = nil, timeout: Duration) throws -> Finished {
        let process = Process()
        process.executableURL = program
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = folder }
        let (stdout, stderr) = (Pipe(), Pipe())
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        // Both pipes are drained while it runs: a child that fills one would otherwise stop.
        let reading = DispatchGroup()
        let output = Outputs()
        DispatchQueue.global().async(group: reading) { output.stdout = stdout.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: reading) { output.stderr = stderr.fileHandleForReading.readDataToEndOfFile() }
        let timedOut = ended.wait(timeout: .now() + timeout.seconds) == .timedOut
        if timedOut {
            process.terminate()
            ended.wait()
        }
        // A grandchild that outlived it may still hold the pipes: its output is then not waited for.
        guard reading.wait(timeout: .now() + 5) == .success else { return Finished(status: process.terminationStatus, stdout: "", stderr: "", timedOut: true) }
        return Finished(status: process.terminationStatus, stdout: String(decoding: output.stdout, as: UTF8.self),
                        stderr: String(decoding: output.stderr, as: UTF8.self), timedOut: timedOut)
    }

    /// Written by one reader each, read once both are done.
    private final class Outputs: @unchecked Sendable {
        // @unchecked: each property is written by its own reader, and read after `reading.wait()`.
        var stdout = Data()
        var stderr = Data()
    }
}
