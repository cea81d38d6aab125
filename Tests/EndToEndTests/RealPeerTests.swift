import Foundation
import LabFixtures
import LabKit
import LabPlatform
import LabServer
import LabVocabulary
import TestServers
import Testing

let runningInCI = ProcessInfo.processInfo.environment["CI"] == "true"

/// Finds a program the way a shell would, plus the sbin folders where Debian puts nginx.
func executable(named name: String) -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
    let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/local/sbin"]
    return folders.map { URL(fileURLWithPath: $0).appendingPathComponent(name) }
        .first { FileManager.default.isExecutableFile(atPath: $0.path) }
}

/// A real nginx (LabServer's `NginxServer`) in a scratch folder of its own, slowed down with
/// `limit_rate` so a download can be killed partway; the folder goes with it.
final class Nginx {
    private let server: NginxServer
    private let prefix: URL
    var root: URL { server.root }
    var port: Int { server.port }

    /// `gzip`: compress every response for a client that accepts it, as a site serving text does.
    /// `directives`: more for the server block, e.g. `if_modified_since before;`.
    init(rate: String, gzip: Bool = false, directives: String = "") throws {
        let nginx = try #require(executable(named: "nginx"), "nginx is not installed")
        prefix = try scratchDirectory()
        server = try NginxServer(program: nginx, in: prefix, rate: rate,
                                 directives: (gzip ? "gzip on; gzip_types *; gzip_min_length 0; " : "") + directives)
    }

    func url(_ name: String) -> String { server.url(name).absoluteString }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: prefix)
    }
}

@Suite(.serialized)
struct RealPeerTests {
    /// Kill -9 midway, run again with the same arguments: the partial file is resumed and verifies.
    /// nginx is installed by .ci/run; in CI its absence fails the test instead of skipping it.
    @Test(.enabled(if: runningInCI || executable(named: "nginx") != nil,
                   "nginx is not installed; the real-peer test is skipped (apt-get install nginx)"),
          arguments: Variant.allCases)
    func killedMidwayThenResumedAgainstNginx(variant: Variant) throws {
        let nginx = try Nginx(rate: "8m")
        let size: Int64 = (24 << 20) + 12_345  // an odd size, not a multiple of any chunk
        let fixture = Fixture(name: "peer", size: size)
        try writeFixture(fixture, prefix: size, to: nginx.root.appendingPathComponent("odd.bin"))
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let output = scratch.appendingPathComponent("odd.bin")
        let arguments = ["--url", nginx.url("odd.bin"), "--sha256", fixture.sha256Hex(),
                         "--output", output.path, "--variant", variant.rawValue, "--json"]

        let first = try ChildProcess("lesson-03-outputstream", arguments)
        try first.start()
        let deadline = Date().addingTimeInterval(20)
        while fileSize(output) < 4 << 20 && first.process.isRunning && Date() < deadline { usleep(10_000) }
        first.kill()
        let killed = first.wait()
        #expect(killed.status == SIGKILL)
        let partial = fileSize(output)
        #expect(partial >= 4 << 20 && partial < size, "partial file has \(partial) bytes")
        if variant == .corrected {
            #expect(ResumeState.load(for: output)?.total == size)
        }

        let second = try ChildProcess.run("lesson-03-outputstream", arguments)
        #expect(second.status == 0, "\(second.stderr)")
        let result = try second.result()
        #expect(result.verified)
        #expect(result.resumedFrom == [partial])
        #expect(result.bytesReceived == size - partial)
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
    }

    /// nginx compressing on the fly ignores Range for a client that accepts gzip: the corrected
    /// lessons ask for the file as it is, so a kill -9 midway is resumed with a 206 all the same.
    @Test(.enabled(if: runningInCI || executable(named: "nginx") != nil,
                   "nginx is not installed; the real-peer test is skipped (apt-get install nginx)"),
          arguments: [LessonID.fileHandle, .outputStream, .sessionDataTask, .asyncAwait])
    func killedMidwayThenResumedAgainstNginxThatCompresses(lesson: LessonID) throws {
        let nginx = try Nginx(rate: "8m", gzip: true)
        let size: Int64 = 24 << 20
        let fixture = Fixture(name: "peer", size: size)
        try writeFixture(fixture, prefix: size, to: nginx.root.appendingPathComponent("log.txt"))
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let output = scratch.appendingPathComponent("log.txt")
        let arguments = ["--url", nginx.url("log.txt"), "--sha256", fixture.sha256Hex(), "--output", output.path, "--json"]

        let first = try ChildProcess(lesson.executable, arguments)
        try first.start()
        let deadline = Date().addingTimeInterval(20)
        while fileSize(output) < 4 << 20 && first.process.isRunning && Date() < deadline { usleep(10_000) }
        first.kill()
        #expect(first.wait().status == SIGKILL)
        let partial = fileSize(output)
        #expect(partial >= 4 << 20 && partial < size, "partial file has \(partial) bytes")

        let second = try ChildProcess.run(lesson.executable, arguments)
        #expect(second.status == 0, "\(second.stderr)")
        let result = try second.result()
        #expect(result.resumedFrom == [partial])
        #expect(result.bytesReceived == size - partial)
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
    }

    /// Lesson 09 against nginx: the transfer service is killed with `kill -9` midway; the system
    /// starts it again, it resumes with Range and If-Range, the app is relaunched, and the file
    /// is exact.
    @Test(.enabled(if: runningInCI || executable(named: "nginx") != nil,
                   "nginx is not installed; the real-peer test is skipped (apt-get install nginx)"))
    func backgroundServiceKilledMidwayAgainstNginx() throws {
        let nginx = try Nginx(rate: "8m")
        let size: Int64 = (24 << 20) + 12_345
        let fixture = Fixture(name: "peer", size: size)
        try writeFixture(fixture, prefix: size, to: nginx.root.appendingPathComponent("odd.bin"))
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let output = scratch.appendingPathComponent("odd.bin")
        let tasks = URL(fileURLWithPath: output.path + ".phone/service/tasks")
        let lesson = try ChildProcess(LessonID.backgroundSession.executable,
                                      ["--url", nginx.url("odd.bin"), "--sha256", fixture.sha256Hex(), "--output", output.path, "--json"])
        try lesson.start()
        func partialBytes() -> Int64 {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: tasks.path)) ?? []
            return names.filter { $0.hasSuffix(".part") }.map { fileSize(tasks.appendingPathComponent($0)) }.max() ?? 0
        }
        let deadline = Date().addingTimeInterval(20)
        while partialBytes() < 4 << 20 && lesson.process.isRunning && Date() < deadline { usleep(10_000) }
        let pid = try #require(Int32((try? String(contentsOfFile: output.path + ".phone/service/pid", encoding: .utf8)) ?? ""))
        #expect(kill(pid, SIGKILL) == 0)
        let finished = lesson.wait(timeout: 120)
        #expect(finished.status == 0, "\(finished.stderr.suffix(800))")
        let result = try finished.result()
        #expect(result.verified)
        #expect(result.background?.serviceRestarts == 1 && result.background?.relaunchesForEvents == 1, "\(String(describing: result.background))")
        #expect(result.resumedFrom.count == 1 && result.resumedFrom[0] >= 4 << 20, "\(result.resumedFrom)")
        #expect(finished.stderr.contains("the transfer service ended (signal 9): the system starts it again"))
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
    }

    /// The embedded server's Range support, checked by a client the lab did not write.
    @Test(.enabled(if: executable(named: "curl") != nil, "curl is not installed; skipped"))
    func curlResumesToIdenticalBytes() throws {
        let server = try LabServer.start()
        defer { server.stop() }
        let fixture = Fixture(name: "curl", size: 5_000_011)
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let output = scratch.appendingPathComponent("curl.bin")
        try writeFixture(fixture, prefix: 2_000_000, to: output)

        guard let curlProgram = executable(named: "curl") else {
            Issue.record("curl disappeared while the tests ran")
            return
        }
        let curl = Process()
        curl.executableURL = curlProgram
        curl.arguments = ["--silent", "--show-error", "--fail", "--continue-at", "-", "--output", output.path,
                          server.url(for: fixture).absoluteString]
        try curl.run()
        curl.waitUntilExit()

        #expect(curl.terminationStatus == 0)
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
        let request = try #require(server.requestLog.last)
        #expect(request.range == "bytes=2000000-")
        #expect(request.status == 206)
        #expect(request.bodyBytesSent == fixture.size - 2_000_000)
    }
}
