import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabCatalogue
import LabFixtures
import LabKit
import LabPlatform
import LabServer
import LabVocabulary
import Testing

/// lesson-00-small-file, run as a child process against the real embedded server.
@Suite(.serialized)
final class Lesson00Tests {
    static let ways = SmallFileWay.allCases

    private let bench: TestBench
    var server: LabServer { bench.server }
    var directory: URL { bench.directory }

    init() throws { bench = try TestBench() }

    private func lesson(_ variant: Variant, way: SmallFileWay, url: URL, extra: [String] = []) throws
        -> (ChildProcess.Finished, URL) {
        let output = directory.appendingPathComponent("\(variant)-\(way.rawValue)-\(UUID().uuidString).bin")
        let finished = try ChildProcess.run("lesson-00-small-file", [
            "--url", url.absoluteString, "--output", output.path, "--variant", variant.rawValue, "--way", way.rawValue, "--json",
        ] + extra)
        return (finished, output)
    }

    /// The requests the server answered for one run token, in order.
    private func served(run: String) -> [LoggedRequest] {
        server.requestLog.filter { $0.target.hasSuffix("&run=\(run)") }
    }

    /// The default run, as `swift run lesson-00-small-file` does it, with each way.
    @Test(arguments: ways)
    func defaultRunVerifies(way: SmallFileWay) throws {
        let output = directory.appendingPathComponent("default-\(way.rawValue).bin")
        // No --way for the first way: it is the default.
        let wayArguments = way == Self.ways[0] ? [] : ["--way", way.rawValue]
        let finished = try ChildProcess.run("lesson-00-small-file", ["--json", "--output", output.path] + wayArguments)
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        let fixture = Fixture(name: "lesson-00-small-file", size: 4 << 20)
        #expect(result.outcome == .verified)
        #expect(result.exitCode == 0)
        #expect(result.way == way.rawValue)
        #expect(result.attempts == 1)
        #expect(result.fileBytes == fixture.size)
        #expect(result.actualSHA256 == fixture.sha256Hex())
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
        #expect(finished.stderr.contains("got 4194304 bytes in one piece, as announced, and saved them"))
        // HEAD for the size first; Data(contentsOf:) shows the lab no response, so its GET has no status.
        #expect(result.requests.map(\.method) == [.head, .get])
        #expect(result.requests.map(\.status) == [200, way == .contentsOf ? nil : 200])
    }

    /// The article looks at neither the error nor the status: a 404 "succeeds".
    @Test(arguments: ways)
    func articleSavesTheErrorPage(way: SmallFileWay) async throws {
        let fixture = Fixture(name: "missing", size: 1 << 20)
        // The same script on a fresh run token: the server's answer to attempt 1, fetched without the lesson.
        let (errorPage, response) = try await URLSession.shared.data(
            from: server.url(for: fixture, faults: "status:404", run: UUID().uuidString))
        #expect((response as? HTTPURLResponse)?.statusCode == 404)
        #expect(String(decoding: errorPage, as: UTF8.self) == "404 Not Found (scripted fault, attempt 1)\n")

        let run = UUID().uuidString
        let url = server.url(for: fixture, faults: "status:404", run: run)
        // Against a plain --url the lab knows no digest (a 404 publishes none): --sha256 gives it one.
        let (finished, output) = try lesson(.article, way: way, url: url, extra: ["--sha256", fixture.sha256Hex()])
        #expect(finished.status == ExitStatus.verificationFailed.rawValue)
        let result = try finished.result()
        #expect(result.outcome == .verificationFailed)
        #expect(result.exitCode == ExitStatus.verificationFailed.rawValue)
        #expect(served(run: run).map(\.status) == [404])
        switch way {
        case .completionHandler:
            #expect(finished.stderr.contains("got \(errorPage.count) bytes in one piece and saved them"), "\(finished.stderr)")
            #expect(try Data(contentsOf: output) == errorPage)
            #expect(result.fileBytes == Int64(errorPage.count))
            #expect(result.error?.message.hasPrefix("SHA-256 mismatch: expected \(fixture.sha256Hex()), got ") == true)
        case .contentsOf:
            // A Linux fact: Data(contentsOf:) throws for a 404 there. The article ignores the
            // error, saves nothing, and still reports success.
            guard Platform.isLinux else { return }
            #expect(finished.stderr.contains("got 0 bytes in one piece and saved them"), "\(finished.stderr)")
            #expect(!FileManager.default.fileExists(atPath: output.path))
            #expect(result.fileBytes == 0)
            #expect(result.error?.message.contains("no file was written") == true)
        }
    }

    @Test(arguments: [(404, "HTTP 404 Not Found"), (500, "HTTP 500 Internal Server Error")], ways)
    func correctedRefusesAnErrorStatus(status: (code: Int, message: String), way: SmallFileWay) throws {
        let run = UUID().uuidString
        let url = server.url(for: Fixture(name: "error", size: 1 << 20), faults: "status:\(status.code)", run: run)
        let (finished, output) = try lesson(.corrected, way: way, url: url)
        #expect(finished.status == ExitStatus.transferFailed.rawValue)
        let lastLine = try #require(finished.stderr.split(separator: "\n").last)
        #expect(lastLine == "lesson-00-small-file: \(status.message) from \(url.absoluteString)")
        #expect(fileSize(output) == -1, "no file was written")
        let result = try finished.result()
        #expect(result.outcome == .transferFailed)
        #expect(result.attempts == 1)
        // The HEAD already told; no GET was sent.
        #expect(served(run: run).map(\.method) == [.head])
    }

    @Test(arguments: ways)
    func correctedRefusesMoreThanItsMemoryLimit(way: SmallFileWay) throws {
        let run = UUID().uuidString
        // The limit the catalogue gives `lab compare`, so the report calls this refusal right.
        let limit = try #require(Catalogue.lesson(named: "00")?.correctedRefusesAbove)
        let url = server.url(for: Fixture(name: "too-big", size: limit + 1), faults: nil, run: run)
        let (finished, output) = try lesson(.corrected, way: way, url: url, extra: ["--quiet"])
        #expect(finished.status == ExitStatus.transferFailed.rawValue)
        #expect(finished.stderr.hasPrefix("lesson-00-small-file: refusing to hold "), "\(finished.stderr)")
        #expect(finished.stderr.contains("bytes in memory (limit 67,108,864, 64.0 MiB)"), "\(finished.stderr)")
        #expect(fileSize(output) == -1)
        #expect(served(run: run).map(\.method) == [.head])
    }

    /// Data(contentsOf:) wraps the broken transfer's URLError in a Cocoa error; it must still count
    /// as a broken transfer worth another attempt.
    @Test(arguments: ways)
    func correctedRetriesADroppedTransfer(way: SmallFileWay) throws {
        let fixture = Fixture(name: "dropped", size: 4 << 20)
        let run = UUID().uuidString
        let url = server.url(for: fixture, faults: "drop:40pct,ok", run: run)
        let (finished, output) = try lesson(.corrected, way: way, url: url)
        #expect(finished.status == 0, "\(finished.stderr)")
        // Linux's words for a body cut short (URLError -1); Darwin says -1005, the connection was lost.
        if Platform.isLinux {
            #expect(finished.stderr.contains("✗ attempt 1 failed after 0 B: transfer closed with"), "\(finished.stderr)")
        }
        let result = try finished.result()
        #expect(result.verified)
        #expect(result.attempts == 2)
        #expect(result.resumedFrom.isEmpty)
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
        let requests = served(run: run)
        #expect(requests.map(\.method) == [.head, .get, .head, .get])
        // The whole body again: one call has nothing to resume from.
        #expect(requests.map(\.range) == [nil, nil, nil, nil])
        #expect(abs(requests[1].bodyBytesSent - fixture.size * 40 / 100) <= 64 << 10)
        #expect(requests[3].bodyBytesSent == fixture.size)
    }

    @Test func articleCountsADroppedTransferAsDone() throws {
        let fixture = Fixture(name: "dropped", size: 4 << 20)
        let url = server.url(for: fixture, faults: "drop:40pct,ok", run: UUID().uuidString)
        let (finished, output) = try lesson(.article, way: .completionHandler, url: url,
                                            extra: ["--sha256", fixture.sha256Hex()])
        #expect(finished.status == ExitStatus.verificationFailed.rawValue)
        #expect(finished.stderr.contains("got 0 bytes in one piece and saved them"), "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.attempts == 1)
        #expect(result.error?.message.contains("no file was written") == true)
        #expect(fileSize(output) == -1)
    }

    @Test func unknownWayGetsOneLineAndExit64() throws {
        let finished = try ChildProcess.run("lesson-00-small-file", ["--way", "bogus"])
        #expect(finished.status == ExitStatus.usage.rawValue)
        #expect(finished.stderr == """
            lesson-00-small-file: The value 'bogus' is invalid for '--way <way>'. Please provide one of 'completion-handler' and 'contents-of'.

            """)
        #expect(finished.stdout.isEmpty)
    }
}
