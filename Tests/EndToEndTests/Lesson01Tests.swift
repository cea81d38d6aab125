import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabKit
import LabServer
import LabVocabulary
import Testing

/// lesson-01-in-memory, run as a child process against the real embedded server.
@Suite(.serialized)
final class Lesson01Tests {
    private let bench: TestBench
    var server: LabServer { bench.server }
    var directory: URL { bench.directory }

    init() throws { bench = try TestBench() }

    private func lesson(_ variant: Variant, url: URL, extra: [String] = []) throws -> (ChildProcess.Finished, URL) {
        let output = directory.appendingPathComponent("\(variant)-\(UUID().uuidString).bin")
        let finished = try ChildProcess.run(
            "lesson-01-in-memory",
            ["--url", url.absoluteString, "--output", output.path, "--variant", variant.rawValue, "--json"] + extra)
        return (finished, output)
    }

    /// The default run, as `swift run lesson-01-in-memory` does it: the first attempt breaks at 40%.
    @Test func defaultRunStartsOverAfterTheDrop() throws {
        let output = directory.appendingPathComponent("default.bin")
        let finished = try ChildProcess.run("lesson-01-in-memory", ["--json", "--output", output.path])
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        let fixture = Fixture(name: "lesson-01-in-memory", size: 64 << 20)
        #expect(result.outcome == .verified)
        #expect(result.actualSHA256 == fixture.sha256Hex())
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
        #expect(result.attempts == 2)
        // Nothing was on disk to resume from: the second attempt asks for the whole file again.
        #expect(result.resumedFrom.isEmpty)
        #expect(result.requests.map(\.range) == [nil, nil])
        #expect(abs(result.bytesDownloadedAgain - fixture.size * 40 / 100) <= 64 << 10,
                "downloaded again: \(result.bytesDownloadedAgain)")
        #expect(finished.stderr.contains("the transfer broke; "))
    }

    /// Holding the whole body costs its size in memory; the article's copy to Data costs it twice.
    @Test(arguments: Variant.allCases)
    func peakMemoryFollowsTheBody(variant: Variant) throws {
        // The process's own 40-odd MB are a third of 128 MiB: once is about 1.33, twice about 2.33.
        let size: Int64 = 128 << 20
        let url = server.url(for: Fixture(name: "big", size: size), faults: nil, run: UUID().uuidString)
        let (finished, output) = try lesson(variant, url: url)
        defer { try? FileManager.default.removeItem(at: output) }
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.verified)
        let peak = Double(result.peakRSSBytes) / Double(size)
        switch variant {
        case .article: #expect(peak >= 1.8, "peak RSS \(result.peakRSSBytes), \(peak) × the body")
        case .corrected: #expect(peak <= 1.5, "peak RSS \(result.peakRSSBytes), \(peak) × the body")
        }
    }

    @Test func notFoundIsSavedByTheArticleAndRefusedByTheCorrectedVariant() async throws {
        let fixture = Fixture(name: "missing", size: 1 << 20)
        // The same script on a fresh run token: the server's answer to attempt 1, fetched without the lesson.
        let (errorPage, _) = try await URLSession.shared.data(
            from: server.url(for: fixture, faults: "status:404", run: UUID().uuidString))

        let url = server.url(for: fixture, faults: "status:404", run: UUID().uuidString)
        let (article, articleFile) = try lesson(.article, url: url, extra: ["--sha256", fixture.sha256Hex()])
        #expect(article.status == ExitStatus.verificationFailed.rawValue)
        #expect(article.stderr.contains("done: the whole body, \(errorPage.count) bytes, is in the buffer"), "\(article.stderr)")
        #expect(try Data(contentsOf: articleFile) == errorPage)
        #expect(try article.result().outcome == .verificationFailed)

        let correctedURL = server.url(for: fixture, faults: "status:404", run: UUID().uuidString)
        let (corrected, correctedFile) = try lesson(.corrected, url: correctedURL, extra: ["--quiet"])
        #expect(corrected.status == ExitStatus.transferFailed.rawValue)
        #expect(corrected.stderr == "lesson-01-in-memory: HTTP 404 Not Found from \(correctedURL.absoluteString)\n")
        #expect(fileSize(correctedFile) == -1)
        let result = try corrected.result()
        #expect(result.outcome == .transferFailed)
        #expect(result.attempts == 1)
    }

    @Test func wayIsRefusedWhereThereIsOnlyOne() throws {
        let finished = try ChildProcess.run("lesson-01-in-memory", ["--way", "contents-of"])
        #expect(finished.status == ExitStatus.usage.rawValue)
        #expect(finished.stderr == "lesson-01-in-memory: Unknown option '--way'. Did you mean '--har'?\n")
        #expect(finished.stdout.isEmpty)
    }
}
