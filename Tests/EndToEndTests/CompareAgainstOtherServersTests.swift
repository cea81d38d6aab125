import Foundation
import LabCatalogue
import LabFixtures
import LabKit
import LabReport
import LabServer
import LabVocabulary
import Testing

/// A server that does not answer: one line, exit 1, and nothing written.
struct CompareAgainstNoServerTests {
    @Test func aServerThatDoesNotAnswerIsOneLine() throws {
        let folder = try scratchDirectory().appendingPathComponent("results")
        let finished = try ChildProcess.run("lab", ["compare", "--server", "http://127.0.0.1:1", "--quick", "-o", folder.path],
                                            timeout: 60)
        #expect(finished.status == 1)
        #expect(finished.stderr.hasPrefix("lab compare: http://127.0.0.1:1 does not answer: "), "\(finished.stderr)")
        #expect(finished.stderr.split(separator: "\n").count == 1, "\(finished.stderr)")
        #expect(finished.stdout.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.path))
    }
}

/// `lab compare --server` against a real nginx, serving the files `--write-fixtures` wrote.
struct CompareAgainstNginxTests {
    @Test(.enabled(if: runningInCI || executable(named: "nginx") != nil,
                   "nginx is not installed; the real-peer test is skipped (apt-get install nginx)"))
    func comparesAgainstFilesServedByNginx() throws {
        let nginx = try Nginx(rate: "0")
        let sizes = ["--sizes", "1MiB,4MiB", "--fault-size", "4MiB"]
        let written = try ChildProcess.run("lab", ["compare", "--write-fixtures", nginx.root.path] + sizes)
        #expect(written.status == 0, "\(written.stderr)")
        let fixtures = nginx.root.appendingPathComponent("fixtures")
        #expect(written.stdout == "\(fixtures.path)/compare-1048576.bin\n\(fixtures.path)/compare-4194304.bin\n")
        #expect(try FileDigest.sha256Hex(of: fixtures.appendingPathComponent("compare-4194304.bin"))
                == Fixture(name: "compare-4194304.bin", size: 4 << 20).sha256Hex())

        let folder = try scratchDirectory()
        let finished = try ChildProcess.run("lab", ["compare", "--server", "http://127.0.0.1:\(nginx.port)",
                                                    "--lessons", "01,03", "--repetitions", "1", "-o", folder.path] + sizes)
        #expect(finished.status == 0, "\(finished.stderr)")
        let results = try ComparisonResults.read(from: folder.appendingPathComponent("results.json"))
        #expect(results.environment.serverKind == .external)
        // Crowded needs no fault injection either, but only lesson 06 runs it.
        #expect(results.settings.scenarios == [.clean, .slowDisk])
        // 2 lessons × 2 variants × 2 sizes clean, and × 1 size slow-disk.
        #expect(results.runs.count == 12)
        for run in results.runs {
            #expect(run.status == .pass, "\(run.lesson) \(run.variant) \(run.scenario): \(run.cause ?? "")")
            // No server log to read: the lesson's own count of body bytes.
            #expect(run.bytesOnWire == run.sizeBytes, "\(run.lesson) \(run.variant) \(run.scenario)")
        }
    }
}

/// `lab compare --profile`: the corrected variants over a slow link, each at the profile's own
/// file size, clean and with a drop; the report's "On slow networks" section reads them.
struct CompareOverNetworksTests {
    @Test func aProfileRunMeasuresFirstByteThroughputAndTheCostOfADrop() throws {
        let folder = try scratchDirectory()
        let finished = try ChildProcess.run("lab", ["compare", "--lessons", "01,03", "--sizes", "1MiB", "--scenarios", "clean",
                                                    "--profile", "3g", "--label", "slow", "-o", folder.path], timeout: 300)
        try #require(finished.status == 0, "\(finished.stderr)")
        let results = try ComparisonResults.read(from: folder.appendingPathComponent("results.json"))
        #expect(results.settings.networks == [.threeG])
        #expect(results.settings.networkRepetitions == 1)
        let over = results.runs.filter { $0.network == .threeG }
        #expect(Set(over.map { "\($0.lesson) \($0.variant) \($0.scenario)" })
                == ["01-in-memory corrected clean", "01-in-memory corrected drop-resume",
                    "03-outputstream corrected clean", "03-outputstream corrected drop-resume"])
        let bandwidth = Double(NetworkProfile.threeG.bytesPerSecond)
        for run in over {
            #expect(run.status == .pass, "\(run.cause ?? "")")
            #expect(run.sizeBytes == NetworkProfile.threeG.compareSize)
            #expect(run.repetitions.count == 1)
            // The head waits for the profile's round trip; the body cannot beat its bandwidth.
            #expect((run.firstByteSeconds ?? 0) >= 0.25, "\(run.firstByteSeconds ?? -1)")
            #expect(run.throughputBytesPerSecond < bandwidth * 1.05)
            // A wide margin: under load the run is slower than its link, never faster.
            #expect(run.throughputBytesPerSecond > bandwidth * 0.2)
        }
        // Lesson 01 starts over after the drop: the 30% comes again, and more if the profile's
        // rare reset (drawn from the URL, whose run token is new each run) cut it once more.
        // Lesson 03 resumes.
        let restarted = try #require(over.first { $0.lesson == "01-in-memory" && $0.scenario == .dropResume })
        let size = NetworkProfile.threeG.compareSize
        #expect(restarted.bytesDownloadedAgain >= size * 30 / 100 && restarted.bytesDownloadedAgain < 3 * size, "\(restarted.bytesDownloadedAgain)")
        let resumed = try #require(over.first { $0.lesson == "03-outputstream" && $0.scenario == .dropResume })
        #expect(resumed.bytesDownloadedAgain == 0)
        // Loopback runs stay as they were: no network, the plan's size.
        #expect(results.runs.filter { $0.network == nil }.allSatisfy { $0.sizeBytes == 1 << 20 && $0.firstByteSeconds ?? 0 < 0.25 })

        // Every new field is documented.
        var found: [String: Set<String>] = [:]
        CompareTests.collectTypes(try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("results.json"))),
                                  path: "", into: &found)
        let documented = try CompareTests.documentedFields()
        for path in found.keys.sorted() { #expect(documented[path] != nil, "\(path) is not in docs/results-schema.md") }

        // The report: a throughput chart against the link's bandwidth, and the engineer's table.
        let report = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(report.contains(#"<section id="networks">"#))
        #expect(report.contains(#"data-chart="network-throughput""#))
        #expect(report.contains(#"<g class="limit" data-limit="3g">"#))
        #expect(report.contains("3g bandwidth 91.6 KiB/s"))
        let table = try #require(report.components(separatedBy: #"data-table="network-3g""#).dropFirst().first?
            .components(separatedBy: "</table>").first)
        #expect(table.components(separatedBy: "<tr data-lesson=").count == 3)
        #expect(table.contains(ByteFormat.iec(restarted.bytesDownloadedAgain)), "lesson 01's bytes fetched again")
        // The fault matrix and the charts read loopback runs only: no 256 KiB clean size appears.
        let matrix = try #require(report.components(separatedBy: #"<section id="fault-matrix">"#).dropFirst().first?
            .components(separatedBy: "</section>").first)
        #expect(!matrix.contains("256 KiB"))
    }

    @Test(arguments: [
        (["--profile", "5g"], "lab compare: The value '5g' is invalid for '--profile <names>': no profile \"5g\"; there are edge, 3g, lte, dsl, wifi\n"),
        (["--profile", "3g", "--profile", "wifi,lan"], "lab compare: The value 'wifi,lan' is invalid for '--profile <names>': no profile \"lan\"; there are edge, 3g, lte, dsl, wifi\n"),
        (["--profile", "3g", "--server", "http://127.0.0.1:9"], "lab compare: --profile needs the embedded server's faults; it does not run with --server\n"),
        (["--profile", "3g", "--variants", "article"], "lab compare: --profile runs the corrected variants, and --variants leaves none\n"),
        (["--profile", "edge", "--lessons", "07"], "lab compare: --profile runs downloads, and lesson 07 uploads\n"),
    ])
    func refusesBadProfiles(arguments: [String], message: String) throws {
        let finished = try ChildProcess.run("lab", ["compare"] + arguments)
        #expect(finished.status == 64)
        #expect(finished.stderr == message)
    }
}
