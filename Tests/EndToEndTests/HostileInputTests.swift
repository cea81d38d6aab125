import Foundation
import LabFixtures
import LabKit
import LabPlatform
import LabServer
import LabVocabulary
import TestThreads
import TestFolders
import Testing

/// Input that used to crash a lesson, hang it, or leak through it: each gets one line on stderr
/// and a non-zero exit, and nothing leaks.
@Suite(.serialized)
final class HostileInputTests {
    private let bench: TestBench
    var server: LabServer { bench.server }
    var directory: URL { bench.directory }

    init() throws { bench = try TestBench() }

    static let lessons = LessonID.allCases.map(\.executable)

    /// Lines the lesson itself wrote on stderr as errors (the story may go there too).
    /// `arguments` run with SIGXFSZ at its default disposition and unblocked, through
    /// `posix_spawn`'s `POSIX_SPAWN_SETSIGDEF` and `POSIX_SPAWN_SETSIGMASK`, which both systems
    /// have (GNU env's `--default-signal` is Linux's only, and leaves the mask as it is).
    static func runWithDefaultXFSZ(_ arguments: [String]) throws -> ChildProcess.Finished {
        let folder = try TestFolders.scratch("xfsz")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (stdout, stderr) = (folder.appendingPathComponent("stdout"), folder.appendingPathComponent("stderr"))
        var actions = Platform.makeSpawnFileActions()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var attributes = Platform.makeSpawnAttributes()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The signal at its default, and blocked nowhere: a thread of this process may block it, a
        // child inherits the mask, and a blocked SIGXFSZ would leave the write to fail with EFBIG.
        var defaults = sigset_t(), unblocked = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGXFSZ)
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = TestFolders.childEnvironment().map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let started = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        try #require(started == 0, "posix_spawn: \(String(cString: strerror(started)))")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let read = { (file: URL) in (try? String(contentsOf: file, encoding: .utf8)) ?? "" }
        // An exit's code is in the second byte; a signal's number, the low seven bits.
        return ChildProcess.Finished(status: status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f),
                                     stdout: read(stdout), stderr: read(stderr))
    }

    static func errorLines(_ finished: ChildProcess.Finished, _ executable: String) -> [Substring] {
        finished.stderr.split(separator: "\n").filter { $0.hasPrefix("\(executable):") }
    }

    /// Above the largest fixture, a size is refused before anything is hashed or sent.
    @Test(arguments: [("lesson-03-outputstream", "9223372036854775807"), ("lesson-03-outputstream", "65GiB"),
                      ("lesson-07-multipart-upload", "100TiB")])
    func sizeAboveTheLargestFixtureIsRefusedAtOnce(executable: String, size: String) async throws {
        try await OffThePool.run {
            let started = Date()
            let finished = try ChildProcess.run(executable, ["--size", size], timeout: 30)
            #expect(Date().timeIntervalSince(started) < 10)
            #expect(finished.status == ExitStatus.usage.rawValue)
            #expect(finished.stderr == "\(executable): --size: \(size) is larger than the largest fixture, 64GiB\n")
        }
    }

    /// gzip measures the compressed length before it answers: a file it cannot measure in time is
    /// refused in one line, before any server starts. 1 GiB itself is served.
    @Test func gzipAboveOneGibibyteIsRefusedAtOnce() async throws {
        try await OffThePool.run {
            let finished = try ChildProcess.run("lesson-03-outputstream", ["--size", "1073741825", "--faults", "ok,gzip"], timeout: 30)
            #expect(finished.status == ExitStatus.usage.rawValue)
            #expect(finished.stderr == "lesson-03-outputstream: --faults: gzip serves files up to 1 GiB: the compressed length is "
                    + "measured before the answer, and a larger file would keep the client waiting past its time-out\n")
        }
    }

    /// `ulimit -f 4096` (2 MiB: sh counts 512-byte blocks): past it the kernel's SIGXFSZ would end
    /// a writer with no word said. The signal is set back to its default first, as in a login
    /// shell: an ignored signal is inherited, the test runner's may be, and sh cannot undo it.
    /// Lesson 05 on a Mac writes through Apple's download task, whose file is CFNetwork's own
    /// (`Lesson05Tests+Failures` skips its twin there for that reason): on Linux only.
    @Test(arguments: lessons.filter { Platform.isLinux || $0 != LessonID.downloadTaskResume.executable }.map { ($0, Variant.corrected) }
          + [(LessonID.outputStream.executable, .article)])
    func fileSizeLimitIsALocalError(executable: String, variant: Variant) async throws {
        try await OffThePool.run {
            let output = directory.appendingPathComponent("\(executable)-\(variant)-\(UUID().uuidString)")
            let lesson = ChildProcess.buildDirectory.appendingPathComponent(executable).path
            let finished = try Self.runWithDefaultXFSZ([
                "/bin/sh", "-c", "ulimit -f 4096; exec \"$0\" \"$@\"", lesson,
                "--size", "16MiB", "--variant", variant.rawValue, "--output", output.path, "--quiet",
            ])
            let lines = Self.errorLines(finished, executable)
            #expect(lines.count == 1, "\(finished.stderr)")
            if variant == .corrected {
                #expect(finished.status == ExitStatus.localIOFailed.rawValue, "\(finished.stderr)")
                #expect(lines.first?.contains("File too large") == true, "\(finished.stderr)")
            } else {
                // The article ignores what `write` returns: the short file is caught by the digest.
                #expect(finished.status == ExitStatus.verificationFailed.rawValue, "\(finished.stderr)")
                #expect(lines.first?.contains("SHA-256 mismatch") == true, "\(finished.stderr)")
            }
        }
    }

    /// A write that fails (a full disk) cancels the transfer, and the cancel must stop the bytes:
    /// a plain URLSession cancel on Linux lands only when the body has ended.
    @Test(arguments: ["lesson-02-filehandle", "lesson-03-outputstream", "lesson-04-session-data-task",
                      "lesson-06-runloop-thread"])
    func aFailedWriteStopsTheTransfer(executable: String) async throws {
        try await OffThePool.run {
            let fixture = Fixture(name: "full-\(executable)", size: 256 << 20)
            let token = UUID().uuidString
            let url = server.url(for: fixture, faults: nil, run: token)
            let finished = try ChildProcess.run(executable, [
                "--url", url.absoluteString, "--output", directory.appendingPathComponent("\(token).bin").path,
                "--disk-full-after", "5MiB", "--sha256", fixture.sha256Hex(), "--quiet",
            ])
            #expect(finished.status == ExitStatus.localIOFailed.rawValue, "\(finished.stderr)")
            #expect(finished.stderr.contains("No space left on device"), "\(finished.stderr)")
            let sent = server.requestLog.filter { $0.target.contains("run=\(token)") }.reduce(0) { $0 + $1.bodyBytesSent }
            // What already sat in the socket buffers may still come; the rest of the 256 MiB may not.
            #expect(sent <= (5 << 20) + (16 << 20), "\(sent) bytes sent for a disk that filled at 5 MiB")
        }
    }

    /// Over 16 MiB the lab server answers before it has hashed the file, so no response of the
    /// download carries `Repr-Digest`: the lesson asks for it with `Want-Repr-Digest`, and verifies.
    @Test func aLargeFileFromALabServerIsStillVerified() async throws {
        try await OffThePool.run {
            let fixture = Fixture(name: "unhashed-\(UUID().uuidString.prefix(8))", size: 32 << 20)
            let url = server.url(for: fixture, faults: nil, run: UUID().uuidString)
            let finished = try ChildProcess.run("lesson-03-outputstream", [
                "--url", url.absoluteString, "--output", directory.appendingPathComponent("\(fixture.name).bin").path, "--json",
            ])
            #expect(finished.status == 0, "\(finished.stderr)")
            let result = try finished.result()
            #expect(result.outcome == .verified)
            #expect(result.expectedSHA256 == fixture.sha256Hex())
            #expect(result.requests.map(\.method) == [.get, .head])
            #expect(result.requests.first?.reprDigestSHA256 == nil)
        }
    }

    @Test func passwordInTheURLIsNeverShown() async throws {
        try await OffThePool.run {
            let fixture = Fixture(name: "secret", size: 1 << 20)
            let url = server.url(for: fixture, faults: nil, run: UUID().uuidString).absoluteString
                .replacingOccurrences(of: "http://", with: "http://student:hunter2@")
            let output = directory.appendingPathComponent("secret.bin")
            let finished = try ChildProcess.run("lesson-03-outputstream", ["--url", url, "--output", output.path, "--json"])
            #expect(finished.status == 0, "\(finished.stderr)")
            #expect(!finished.stdout.contains("hunter2"))
            #expect(!finished.stderr.contains("hunter2"), "\(finished.stderr)")
            let result = try finished.result()
            #expect(result.url == url.replacingOccurrences(of: "student:hunter2@", with: "***@"))
            #expect(result.requests.allSatisfy { $0.url.contains("://***@127.0.0.1:") }, "\(result.requests.map(\.url))")
            #expect(finished.stderr.contains("  from http://***@127.0.0.1:"), "\(finished.stderr)")
        }
    }

    @Test func aHugeURLIsShortenedInItsErrorLine() async throws {
        try await OffThePool.run {
            let url = "http://127.0.0.1:1/" + String(repeating: "a", count: 100_000)
            let unreachable = try ChildProcess.run("lesson-03-outputstream", ["--url", url, "--quiet"])
            #expect(unreachable.status == ExitStatus.transferFailed.rawValue)
            #expect(unreachable.stderr.split(separator: "\n").count == 1)
            #expect(unreachable.stderr.count < 1_000, "\(unreachable.stderr.count) characters")

            let refused = try ChildProcess.run("lesson-03-outputstream", ["--url", "gopher://" + String(repeating: "b", count: 100_000)])
            #expect(refused.status == ExitStatus.usage.rawValue)
            #expect(refused.stderr.split(separator: "\n").count == 1)
            #expect(refused.stderr.count < 1_000, "\(refused.stderr.count) characters")
            #expect(refused.stderr.contains("… (100009 characters)"), "\(refused.stderr)")
        }
    }

    /// 405 has no reason phrase in the lab's table: the line has no hole where it would be.
    @Test func statusWithoutAReasonPhrase() async throws {
        try await OffThePool.run {
            let fixture = Fixture(name: "teapot", size: 1 << 20)
            let url = server.url(for: fixture, faults: "status:405", run: UUID().uuidString)
            let finished = try ChildProcess.run("lesson-03-outputstream",
                                                ["--url", url.absoluteString, "--output", directory.appendingPathComponent("405").path, "--quiet"])
            #expect(finished.status == ExitStatus.transferFailed.rawValue)
            #expect(finished.stderr == "lesson-03-outputstream: HTTP 405 from \(url.absoluteString)\n")
        }
    }
}
