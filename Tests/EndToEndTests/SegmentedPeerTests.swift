import Foundation
import LabFixtures
import LabServer
import TestServers
import Testing

/// aria2c, the download manager lesson 11 is measured against, meets the lab server's limit on
/// GETs at once (`connections:`) as it meets a server's limit on connections per client.
@Suite struct SegmentedPeerTests {
    /// Eight segments asked for, four allowed: aria2c is refused past four, tries again, and
    /// ends with the right file; the server never answered more than four at once.
    @Test(.enabled(if: runningInCI || executable(named: "aria2c") != nil, "aria2c is not installed (.ci/run installs it)"))
    func aria2cIsHeldToTheLimitAndStillGetsTheFile() throws {
        let aria2c = try #require(executable(named: "aria2c"))
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try withLabServer { server in
            let fixture = Fixture(name: "segments.bin", size: 8 << 20)
            let url = server.url(for: fixture, faults: "throttle:4MiB+connections:4*100", run: "aria2")
            let finished = try ChildProcess.runProgram(aria2c, ["--quiet", "--max-connection-per-server=8", "--split=8", "--min-split-size=1M",
                                                                "--retry-wait=1", "--dir", folder.path, "--out", "file.bin", url.absoluteString],
                                                       timeout: 60)
            #expect(finished.status == 0, "\(finished.stdout)\(finished.stderr)")
            #expect(try FileDigest.sha256Hex(of: folder.appendingPathComponent("file.bin")) == fixture.sha256Hex())

            let gets = server.requestLog.filter { $0.method == .get && $0.target.hasSuffix("run=aria2") }
            #expect(gets.contains { $0.status == 503 }, "aria2c asked for more than four at once: \(gets.map(\.status))")
            #expect(gets.filter { $0.status == 206 || $0.status == 200 }.count >= 4)
            #expect((1...4).contains(gets.mostSendingAtOnce), "\(gets.mostSendingAtOnce) GETs were answered at once")
        }
    }
}
