import Foundation
import LabVocabulary
import Testing

/// `lab compare`'s second launches, for the lessons where they tell most.
struct CompareRelaunchTests {
    /// A second launch with the finished file: the articles that take a file of the right size
    /// for the current one fetch nothing and keep a stale file after a change; the corrected
    /// variants, which keep no validator once the file is whole, fetch it all again.
    @Test func aSecondLaunchFetchesAgainOrKeepsAStaleFile() throws {
        let (folder, results) = try compareResults(["--lessons", "02,03,04", "--scenarios", "relaunch,relaunch-changed",
                                                    "--fault-size", "1MiB", "--repetitions", "1"])
        let run = results.run
        let size: Int64 = 1 << 20
        // Nothing changed: lesson 03's article asks with HEAD and fetches no body; its corrected
        // variant downloads the file again.
        let kept = try run(.outputStream, .article, .relaunch)
        #expect(kept.bytesDownloadedAgain == 0)
        #expect(kept.secondLaunch?.requests == ["HEAD 200"] && kept.secondLaunch?.bodyBytes == 0)
        let again = try run(.outputStream, .corrected, .relaunch)
        #expect(again.status == .pass && again.bytesDownloadedAgain == size)
        #expect(again.secondLaunch?.requests == ["GET 200"] && again.secondLaunch?.bodyBytes == size)
        // The file once, and nothing in Foundation's URL cache: on Linux it never stores a response.
        #expect(again.secondLaunch?.fileBytes == size && again.secondLaunch?.cacheBytes == 0)
        // Changed, same size: taken for the current file, and caught by the digest.
        let stale = try run(.outputStream, .article, .relaunchChanged)
        #expect(stale.status == .fail && stale.expectedFailure && stale.cause == "right size, wrong bytes (SHA-256 differs)")
        // Two versions of the file are what a second launch after a change must fetch: nothing more.
        let changed = try run(.outputStream, .corrected, .relaunchChanged)
        #expect(changed.status == .pass && changed.bytesDownloadedAgain == 0)
        // The failures are exactly those the catalogue names.
        let failed = Set(results.runs.filter { $0.status == .fail }.map { "\($0.lesson) \($0.variant) \($0.scenario)" })
        #expect(failed == ["02-filehandle article relaunch", "02-filehandle article relaunch-changed",
                           "03-outputstream article relaunch-changed", "04-session-data-task article relaunch-changed"])
        #expect(!results.runs.contains { $0.status == .fail && !$0.expectedFailure })
        let report = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(report.contains("downloads the file again on a second launch") && report.contains("keeps the file on a second launch"))
        #expect(report.contains("<span class=\"second-launch\">HEAD 200; 0 B</span>"))
    }
}
