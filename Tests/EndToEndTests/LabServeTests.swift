import Foundation
import LabKit
import Testing

/// `lab serve`, run as a child process.
@Suite(.serialized)
struct LabServeTests {
    @Test func servesWhatItPrintsAndStopsOnCtrlC() throws {
        let child = try ChildProcess("lab", ["serve", "--port", "0"])
        try child.start()
        let deadline = Date().addingTimeInterval(20)
        var banner = ""
        while !banner.contains("Press Ctrl-C to stop.") && Date() < deadline {
            usleep(50_000)
            banner = child.stdoutSoFar
        }
        let lines = banner.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let urlLine = try #require(lines.first { $0.hasPrefix("1MiB") }, "\(banner)")
        let digestLine = try #require(lines.first { $0.hasPrefix("sha256 ") })
        let url = try #require(urlLine.split(separator: " ").last.map(String.init))

        let file = try scratchDirectory().appendingPathComponent("sample.bin")
        let curl = try ChildProcess.runProgram(try #require(executable(named: "curl")),
                                               ["--silent", "--fail", "--output", file.path, url])
        #expect(curl.status == 0)
        #expect(fileSize(file) == 1 << 20)
        #expect(try "sha256 " + FileDigest.sha256Hex(of: file) == digestLine)

        kill(child.process.processIdentifier, SIGINT)
        let stopped = child.wait(timeout: 10)
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    @Test(arguments: [
        (["serve", "--port", "99999"], "lab serve: --port must be between 0 and 65535\n"),
        (["bogus"], "lab: Unexpected argument 'bogus'\n"),
    ])
    func badInputGetsOneLineAndExit64(arguments: [String], message: String) throws {
        let finished = try ChildProcess.run("lab", arguments)
        #expect(finished.status == 64)
        #expect(finished.stderr == message)
        #expect(finished.stdout.isEmpty)
    }
}
