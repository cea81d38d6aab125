import Foundation
import LabFixtures
import LabKit
import LabPlatform
import LabServer
import LabVocabulary
import TestFolders
import Testing

/// Servers that break HTTP's rules, run against the built lessons: none may splice two versions
/// of a file, loop for ever, hold an endless answer in memory or write an endless body.
@Suite(.serialized)
struct HostileServerTests {
    /// Every corrected way that resumes a partial file with Range.
    static let resumingWays: [(lesson: String, extra: [String])] = [
        ("lesson-02-filehandle", []), ("lesson-03-outputstream", []), ("lesson-04-session-data-task", []),
        ("lesson-06-runloop-thread", ["--way", "run-loop"]), ("lesson-08-async-await", ["--way", "chunks"]),
        ("lesson-08-async-await", ["--way", "byte-by-byte"]), ("lesson-08-async-await", ["--way", "pause"]),
    ]

    static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                    timeout: TimeInterval = 120) throws -> (finished: ChildProcess.Finished, seconds: Double) {
        let child = try ChildProcess(executable, arguments)
        if !environment.isEmpty {
            child.process.environment = TestFolders.childEnvironment(environment)
        }
        let started = Date()
        try child.start()
        let finished = child.wait(timeout: timeout)
        return (finished, Date().timeIntervalSince(started))
    }

    /// The file is gone, or holds only the start of `fixture`: nothing of another version.
    static func holdsNothingButAPrefix(_ output: URL, of fixture: Fixture) throws -> Bool {
        let size = fileSize(output)
        guard size >= 0 else { return true }
        return try size <= fixture.size && file(output, holds: [(fixture, size)])
    }

    // MARK: - A resume answered for another version

    /// A server that ignores If-Range answers the resume with a 206 at the right offset, of a new
    /// version: a new ETag, a new total, no digest. Splicing it would end "downloaded" with a file
    /// that never existed; every resuming way must start over instead, within --max-attempts.
    @Test(arguments: resumingWays)
    func aResumeForAnotherVersionIsNeverSpliced(way: (lesson: String, extra: [String])) throws {
        let fixture = Fixture(name: "v1", size: 4 << 20)
        let newVersion = Fixture(name: "v1", size: fixture.size + 1000, generation: 1)
        let peer = try AnyPathServer(fixture: fixture,
                                     behaviour: .newVersionOnResume(dropAfter: fixture.size * 4 / 10, newVersion: newVersion))
        defer { peer.stop() }
        let output = try scratchDirectory().appendingPathComponent("v1.bin")
        let url = "http://127.0.0.1:\(peer.port)/files/v1.bin"
        let (finished, _) = try Self.run(way.lesson, ["--url", url, "--output", output.path, "--max-attempts", "3", "--json"] + way.extra)
        #expect(finished.status == 69, "\(finished.stderr)")
        #expect(try finished.result().outcome == .transferFailed)
        // The story says why the partial file went; the file never holds a byte of the new version.
        #expect(finished.stderr.contains("the 206 is for another version of the file"), "\(finished.stderr)")
        #expect(try Self.holdsNothingButAPrefix(output, of: fixture))
        // After the refused 206, the next request asks for the whole file again.
        let heads = peer.requestHeads
        let resume = try #require(heads.firstIndex { $0.contains("Range: bytes=") }, "\(heads)")
        #expect(heads.count > resume + 1 && !heads[resume + 1].contains("Range:"), "\(heads)")
        #expect(heads.count <= 6, "\(heads)")

        // Under --quiet it is no longer silent: exit 69 and one line, and still no splice.
        try? FileManager.default.removeItem(at: output)
        let quiet = try Self.run(way.lesson, ["--url", url, "--output", output.path, "--max-attempts", "2", "--quiet"] + way.extra).finished
        #expect(quiet.status == 69, "\(quiet.stderr)")
        #expect(quiet.stderr.split(separator: "\n").count == 1, "\(quiet.stderr)")
        #expect(try Self.holdsNothingButAPrefix(output, of: fixture))
    }

    @Test(.enabled(if: Platform.isLinux, "LabKit's download task, Linux's stand-in, refuses the 206; what Apple's does is not known here"))
    func aResumeDataResumeForAnotherVersionIsNeverSpliced() throws {
        let fixture = Fixture(name: "v1.bin", size: 4 << 20)
        let newVersion = Fixture(name: "v1.bin", size: fixture.size + 1000, generation: 1)
        let peer = try AnyPathServer(fixture: fixture,
                                     behaviour: .newVersionOnResume(dropAfter: fixture.size * 6 / 10, newVersion: newVersion))
        defer { peer.stop() }
        let folder = try scratchDirectory()
        let documents = folder.appendingPathComponent("Documents")
        let (finished, _) = try Self.run(
            "lesson-05-download-task-resume",
            ["--url", "http://127.0.0.1:\(peer.port)/files/v1.bin", "--output", documents.path, "--max-attempts", "3", "--json"],
            environment: ["TMPDIR": folder.appendingPathComponent("tmp").path])
        #expect(finished.status == 69, "\(finished.stderr)")
        #expect(finished.stderr.contains("another version of the file"), "\(finished.stderr)")
        let saved = (try? FileManager.default.contentsOfDirectory(atPath: documents.path)) ?? []
        #expect(saved.allSatisfy { $0.hasSuffix(".resumedata") }, "\(saved)")
        #expect(peer.requestHeads.contains { $0.contains("Range: bytes=") }, "\(peer.requestHeads)")
    }

    /// Exit 0 with no digest to check against says so, even with --quiet, and in the record.
    @Test func anUnverifiedDownloadIsImpossibleToMiss() throws {
        let fixture = Fixture(name: "nodigest.bin", size: 1 << 20)
        let peer = try AnyPathServer(fixture: fixture)
        defer { peer.stop() }
        let output = try scratchDirectory().appendingPathComponent("nodigest.bin")
        let (finished, _) = try Self.run("lesson-03-outputstream",
                                         ["--url", "http://127.0.0.1:\(peer.port)/nodigest.bin", "--output", output.path, "--json", "--quiet"])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(try finished.result().outcome == .unverified)
        #expect(try !finished.result().verified)
        #expect(finished.stderr == "lesson-03-outputstream: warning: \(output.path) was downloaded but NOT verified: "
                + "no SHA-256 was known (pass --sha256, or use a server that sends Repr-Digest)\n")
    }

    // MARK: - 416 for ever

    /// A server that answers every GET with 416 `bytes */0`: each way stops within
    /// --max-attempts, with or without a partial file to resume.
    @Test(arguments: resumingWays)
    func anEndless416IsBounded(way: (lesson: String, extra: [String])) throws {
        let peer = try AnyPathServer(fixture: Fixture(name: "any", size: 1000), behaviour: .alwaysUnsatisfiable)
        defer { peer.stop() }
        let output = try scratchDirectory().appendingPathComponent("partial.bin")
        let url = "http://127.0.0.1:\(peer.port)/files/partial.bin"
        // A partial file and its sidecar, as a killed run leaves them: the lesson asks with Range.
        try Data(repeating: 7, count: 500).write(to: output)
        try ResumeState(url: url, validator: "\"old\"", total: 1000).save(for: output)
        let (finished, seconds) = try Self.run(way.lesson, ["--url", url, "--output", output.path, "--json", "--quiet"] + way.extra,
                                               timeout: 60)
        #expect(!finished.timedOut)
        #expect(finished.status == 69, "\(finished.stderr)")
        #expect(finished.stderr.contains("416"), "\(finished.stderr)")
        #expect(peer.requestLines.count <= 5, "\(peer.requestLines.count) requests")
        #expect(seconds < 30)
    }

    // MARK: - Answers and bodies that never end

    /// The upload's answer is a few hundred bytes; one that never ends is given up on.
    @Test(arguments: ["stream", "body-file"])
    func anEndlessUploadAnswerIsBounded(way: String) throws {
        let peer = try AnyPathServer(fixture: Fixture(name: "any", size: 1), behaviour: .endlessBody)
        defer { peer.stop() }
        let output = try scratchDirectory().appendingPathComponent("upload.bin")
        let (finished, seconds) = try Self.run(
            "lesson-07-multipart-upload",
            ["--url", "http://127.0.0.1:\(peer.port)/upload", "--size", "1MiB", "--output", output.path, "--way", way, "--json", "--quiet"],
            timeout: 90)
        #expect(!finished.timedOut)
        #expect(finished.status == 69, "\(finished.stderr)")
        #expect(finished.stderr.contains("the server's answer did not end within 1.0 MiB or 30 s"), "\(finished.stderr)")
        #expect(try finished.result().peakRSSBytes < 200 << 20)
        #expect(seconds < 60)
    }

    /// A 200 without Content-Length that never ends: --max-filesize stops it, the partial file stays.
    @Test(arguments: [("lesson-08-async-await", ["--way", "chunks"]), ("lesson-03-outputstream", []),
                      ("lesson-01-in-memory", ["--variant", "corrected"])])
    func anEndlessBodyStopsAtMaxFilesize(lesson: String, extra: [String]) throws {
        let peer = try AnyPathServer(fixture: Fixture(name: "any", size: 1), behaviour: .endlessBody)
        defer { peer.stop() }
        let output = try scratchDirectory().appendingPathComponent("endless.bin")
        let (finished, seconds) = try Self.run(
            lesson, ["--url", "http://127.0.0.1:\(peer.port)/endless.bin", "--output", output.path, "--max-filesize", "4MiB",
                     "--sha256", String(repeating: "0", count: 64), "--json", "--quiet"] + extra, timeout: 60)
        #expect(!finished.timedOut)
        #expect(finished.status == 69, "\(finished.stderr)")
        #expect(finished.stderr.contains("gave up: the server sent more than --max-filesize 4,194,304 bytes in one response"),
                "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.outcome == .transferFailed)
        #expect(fileSize(output) <= 4 << 20)
        #expect(seconds < 30)
    }

    /// `--max-time` ends a run whose body never ends, even where no chunk is seen (a completion
    /// handler gets the body only at its end), with the record and exit 69.
    @Test(arguments: [("lesson-00-small-file", ["--variant", "article"]), ("lesson-08-async-await", ["--way", "download"]),
                      ("lesson-04-session-data-task", [])])
    func anEndlessBodyStopsAtMaxTime(lesson: String, extra: [String]) throws {
        let peer = try AnyPathServer(fixture: Fixture(name: "any", size: 1), behaviour: .endlessBody)
        defer { peer.stop() }
        let folder = try scratchDirectory()
        let output = folder.appendingPathComponent("endless.bin")
        let (finished, seconds) = try Self.run(
            lesson, ["--url", "http://127.0.0.1:\(peer.port)/endless.bin", "--output", output.path, "--max-time", "2",
                     "--json", "--quiet"] + extra, environment: ["TMPDIR": folder.path], timeout: 60)
        #expect(!finished.timedOut)
        #expect(finished.status == 69, "\(finished.stderr)")
        #expect(finished.stderr.hasPrefix("\(lesson): gave up: the run took longer than --max-time 2 s"), "\(finished.stderr)")
        #expect(try finished.result().outcome == .timedOut)
        #expect(seconds < 15)
    }

    /// A server that stops sending costs --idle-timeout per attempt, not Foundation's 60 s.
    @Test func aStalledServerCostsTheIdleTimeout() throws {
        let bench = try TestBench()
        let fixture = Fixture(name: "stalled", size: 1 << 20)
        let url = bench.server.url(for: fixture, faults: "stall:50pct,stall:50pct", run: UUID().uuidString)
        let output = bench.directory.appendingPathComponent("stalled.bin")
        let (finished, seconds) = try Self.run(
            "lesson-03-outputstream", ["--url", url.absoluteString, "--output", output.path, "--idle-timeout", "1",
                                       "--max-attempts", "2", "--json", "--quiet"], timeout: 60)
        #expect(finished.status == 69, "\(finished.stderr)")
        // The lab's sentence replaces Linux's bare "NSURLErrorDomain error -1001"; Darwin has its own.
        #expect(finished.stderr.contains(Platform.isLinux ? "timed out: nothing arrived for too long (see --idle-timeout) (URLError -1001)"
                                                          : "(URLError -1001)"), "\(finished.stderr)")
        #expect(seconds < 10)
        // Each attempt stalls halfway through what it asked for: at 512 KiB, then at 768 KiB.
        #expect(fileSize(output) == (1 << 19) + (1 << 18))
    }

    @Test(arguments: [
        (["--max-time", "0"], "--max-time must be a number of seconds above 0 and at most 86400"),
        (["--max-time", "nan"], "--max-time must be a number of seconds above 0 and at most 86400"),
        (["--idle-timeout", "0"], "--idle-timeout must be a whole number of seconds from 1 to 3600"),
        (["--idle-timeout", "0.5"], "The value '0.5' is invalid for '--idle-timeout <idle-timeout>'"),
        (["--max-filesize", "lots"], "The value 'lots' is invalid for '--max-filesize <max-filesize>': bad size \"lots\": expected "),
        (["--size", "12QB"], "The value '12QB' is invalid for '--size <size>': bad size \"12QB\": expected "),
        (["--faults", "drop:lots"], "The value 'drop:lots' is invalid for '--faults <faults>': bad fault \"drop:lots\": "),
        (["--max-filesize", "0"], "--max-filesize must be above 0"),
    ])
    func badLimitsGetOneLineAndExit64(arguments: [String], message: String) throws {
        let (finished, _) = try Self.run("lesson-03-outputstream", arguments)
        #expect(finished.status == 64)
        #expect(finished.stderr.hasPrefix("lesson-03-outputstream: \(message)"), "\(finished.stderr)")
        #expect(finished.stderr.split(separator: "\n").count == 1)
    }

    // MARK: - The local side

    /// Foundation stops the program (a `try!`) when its download folder cannot be made; lesson 08
    /// says so first, as a local file error. Lesson 07 needs no temporary folder.
    @Test func anUnwritableTemporaryFolderIsALocalError() throws {
        let folder = try scratchDirectory()
        let output = folder.appendingPathComponent("x.bin")
        // TMPDIR names a file: no folder can be made inside it.
        let notAFolder = folder.appendingPathComponent("not-a-folder")
        try Data("a file".utf8).write(to: notAFolder)
        let (finished, _) = try Self.run("lesson-08-async-await", ["--way", "download", "--size", "1MiB", "--output", output.path],
                                         environment: ["TMPDIR": notAFolder.path])
        #expect(finished.status == 74, "\(finished.stderr)")
        #expect(finished.stderr.hasPrefix("lesson-08-async-await: cannot write \(notAFolder.path)/download-lab-\(getuid())/tmp/lesson-08-"),
                "\(finished.stderr)")
        #expect(finished.stderr.contains("cannot create the temporary folder"))
        #expect(finished.stderr.split(separator: "\n").count == 1)
        // Lesson 07 writes its body file beside the file it sends, not in TMPDIR, and removes it.
        let upload = try Self.run("lesson-07-multipart-upload", ["--way", "body-file", "--size", "1MiB", "--output", output.path],
                                  environment: ["TMPDIR": notAFolder.path]).finished
        #expect(upload.status == 0, "\(upload.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["not-a-folder", "x.bin"])
        #expect(try String(contentsOf: notAFolder, encoding: .utf8) == "a file")
    }

    /// What a server sends is printed with its control characters escaped: an ESC sequence would
    /// retitle the terminal and clear the screen.
    @Test func controlCharactersFromAServerAreEscaped() throws {
        let fixture = Fixture(name: "escape.bin", size: 1 << 20)
        // An ETag that would set the terminal's title and clear the screen.
        let peer = try AnyPathServer(fixture: fixture, etag: "\"\u{1B}]2;owned\u{07}\u{1B}[2J\"")
        defer { peer.stop() }
        let folder = try scratchDirectory()
        // A path with ESC and a line break in it: both reach the story and the error line.
        let output = folder.appendingPathComponent("a\u{1B}]0;owned\u{07}\nb.bin")
        let (finished, _) = try Self.run("lesson-03-outputstream",
                                         ["--url", "http://127.0.0.1:\(peer.port)/escape.bin", "--output", output.path,
                                          "--sha256", String(repeating: "0", count: 64)])
        #expect(finished.status == 65)
        #expect(!finished.stdout.contains("\u{1B}") && !finished.stderr.contains("\u{1B}"))
        #expect(finished.stdout.contains("a\\u{1B}]0;owned\\u{07}\\nb.bin"), "\(finished.stdout)")
        #expect(finished.stdout.contains("ETag: \"\\u{1B}]2;owned\\u{07}\\u{1B}[2J\""), "\(finished.stdout)")
        #expect(finished.stderr.split(separator: "\n").count == 1, "\(finished.stderr)")
    }
}
