import Foundation
import LabFixtures
import LabServer
import LabVocabulary
import Testing

/// lesson-11-segmented's plan against what a killed run, a planted file or a server with no
/// validators leaves it: a complete plan ends the attempt, a plan that does not fit the file is
/// set aside, and a server that honours Range without ETag or Last-Modified gets one stream,
/// resumed with Range alone, exact after a drop and after a kill.
@Suite(.serialized)
final class Lesson11PlanTests {
    static let lesson = LessonID.segmented.executable
    private let bench: TestBench

    init() throws { bench = try TestBench() }

    private func gets(_ token: String) -> [LoggedRequest] {
        bench.server.requestLog.filter { $0.method == .get && $0.target.hasSuffix("run=\(token)") }
    }

    private func arguments(_ url: URL, _ output: URL, _ fixture: Fixture) -> [String] {
        ["--url", url.absoluteString, "--output", output.path, "--sha256", fixture.sha256Hex(), "--json", "--max-time", "60"]
    }

    /// A finished file with the plan a kill left just before it was removed: one byte asked with
    /// If-Range, and the run ends verified (it hung until --max-time before).
    @Test func aCompletePlanEndsTheAttempt() throws {
        let fixture = Fixture(name: "complete.bin", size: 2 << 20)
        let output = bench.directory.appendingPathComponent("complete.bin")
        try fixture.write(to: output)
        let half = fixture.size / 2
        let plan = #"{"total":\#(fixture.size),"validator":"\#(fixture.etag.replacingOccurrences(of: "\"", with: "\\\""))","segments":[{"first":0,"last":\#(half - 1),"done":\#(half)},{"first":\#(half),"last":\#(fixture.size - 1),"done":\#(half)}]}"#
        try Data(plan.utf8).write(to: URL(fileURLWithPath: output.path + ".segments"))
        let token = UUID().uuidString
        let finished = try ChildProcess.run(Self.lesson, arguments(bench.server.url(for: fixture, run: token), output, fixture), timeout: 90)
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(gets(token).map { "\($0.status) \($0.range ?? "") \($0.ifRange ?? "")" } == ["206 bytes=0-0 \(fixture.etag)"])
        #expect(!FileManager.default.fileExists(atPath: output.path + ".segments"))
    }

    /// Plans no run wrote: numbers that overflow, ranges past the file or with gaps, not JSON,
    /// too long. Each is set aside with one line, and the download starts over and verifies.
    @Test(arguments: [
        #"{"total":2097152,"validator":"x","segments":[{"first":0,"last":9223372036854775807,"done":0}]}"#,
        #"{"total":2097152,"validator":"x","segments":[{"first":0,"last":2097151,"done":9223372036854775807}]}"#,
        #"{"total":2097152,"validator":"x","segments":[{"first":-9223372036854775808,"last":2097151,"done":0}]}"#,
        #"{"total":2097152,"validator":"x","segments":[{"first":0,"last":1048575,"done":0},{"first":1048577,"last":2097151,"done":0}]}"#,
        #"{"total":2097152,"validator":"x","segments":[{"first":0,"last":6291455,"done":0}]}"#,
        "not a plan", String(repeating: " ", count: 1 << 20),
    ])
    func aPlanThatDoesNotFitTheFileIsSetAside(plan: String) throws {
        let fixture = Fixture(name: "planted.bin", size: 2 << 20)
        let output = bench.directory.appendingPathComponent("planted-\(UUID().uuidString).bin")
        try Data(count: Int(fixture.size)).write(to: output)
        try Data(plan.utf8).write(to: URL(fileURLWithPath: output.path + ".segments"))
        let token = UUID().uuidString
        let finished = try ChildProcess.run(Self.lesson, arguments(bench.server.url(for: fixture, run: token), output, fixture), timeout: 90)
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stderr.contains(".segments "), "\(finished.stderr)")
        #expect(finished.stderr.contains(": starting over"), "\(finished.stderr)")
        #expect(gets(token).first?.range == "bytes=0-1048575")
        #expect(!finished.stderr.contains("Fatal error") && !finished.stderr.contains("runtime failure"))
    }

    /// No ETag, no Last-Modified: the rest of the file is one range after the first, never two
    /// GETs at once, no If-Range; a drop is resumed with Range alone, and the story says what
    /// that cannot prove.
    @Test(arguments: ["no-validators*100", "drop:40pct+no-validators,no-validators+drop:50pct,no-validators*100"])
    func aServerWithNoValidatorsGetsOneStreamResumed(faults: String) throws {
        let fixture = Fixture(name: "unvalidated.bin", size: 6 << 20)
        let output = bench.directory.appendingPathComponent("unvalidated-\(UUID().uuidString).bin")
        let token = UUID().uuidString
        let finished = try ChildProcess.run(Self.lesson, arguments(bench.server.url(for: fixture, faults: faults, run: token), output, fixture)
                                                + ["--max-attempts", "5"], timeout: 90)
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stderr.contains("no ETag or Last-Modified to keep segments to one version: one stream"), "\(finished.stderr)")
        let log = gets(token)
        #expect(log.allSatisfy { $0.ifRange == nil && ($0.status == 206) }, "\(log.map { "\($0.status) \($0.range ?? "")" })")
        // One stream: no GET arrives before the one before it has sent its last bytes.
        #expect(zip(log, log.dropFirst()).allSatisfy { ($0.lastBodyBytesAt ?? .infinity) <= $1.arrivedAt })
        #expect(try finished.result().bytesDownloadedAgain == 0)
    }

    /// A run that saved nothing says so in its summary, and no file is there.
    @Test func aRunThatSavedNothingSaysSo() throws {
        let fixture = Fixture(name: "none.bin", size: 2 << 20)
        let output = bench.directory.appendingPathComponent("none.bin")
        let finished = try ChildProcess.run(Self.lesson, arguments(bench.server.url(for: fixture, faults: "status:404", run: UUID().uuidString), output, fixture))
        #expect(finished.status == ExitStatus.transferFailed.rawValue, "\(finished.stderr)")
        #expect(finished.stderr.contains("  saved as          (nothing saved)\n"), "\(finished.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
    }

    /// Killed while its one stream runs, and run again: the rerun asks with Range (no If-Range)
    /// for where the kept plan says it stopped (at most 512 KiB before what it wrote, and what the sockets held), and the file verifies.
    @Test func aKilledDownloadFromAServerWithNoValidatorsResumes() throws {
        let fixture = Fixture(name: "unvalidated-killed.bin", size: 16 << 20)
        let output = bench.directory.appendingPathComponent("unvalidated-killed.bin")
        let token = UUID().uuidString
        let arguments = arguments(bench.server.url(for: fixture, faults: "throttle:4MiB+no-validators*100", run: token), output, fixture)
        let first = try ChildProcess(Self.lesson, arguments)
        try first.start()
        // Killed once the server has sent 6 MiB of the one stream: a moment the server's log names.
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, (gets(token).last.map { $0.range == "bytes=0-1048575" ? 0 : (1 << 20) + $0.bodyBytesSent } ?? 0) < 6 << 20 {
            usleep(20_000)
        }
        first.kill()
        _ = first.wait()
        let killed = gets(token)
        let rerun = try ChildProcess.run(Self.lesson, arguments, timeout: 90)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let resumed = try #require(gets(token).dropFirst(killed.count).first)
        let start = try #require(resumed.range.flatMap(RangeHeader.segmentStart(of:)))
        let reached = (1 << 20) + (killed.last?.bodyBytesSent ?? 0)
        #expect(resumed.ifRange == nil && start <= reached && reached - start <= 1 << 20, "\(resumed.range ?? ""): reached \(reached)")
        #expect(try rerun.result().resumedFrom == [start])
    }
}
