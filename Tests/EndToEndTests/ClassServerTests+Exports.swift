import Foundation
import LabCatalogue
import LabClass
import LabPlatform
import LabReport
import LabVocabulary
import Synchronization
import TestServers
import TestThreads
import Testing

/// The class's exports, and what `lab class serve` refuses: bad options, a data folder it cannot
/// write, a port in use.
extension ClassServerTests {
    // MARK: Exports

    /// xmllint (libxml2-utils) is installed by .ci/run; in CI its absence fails the test.
    @Test(.enabled(if: runningInCI || executable(named: "xmllint") != nil,
                   "xmllint is not installed; the export test is skipped (apt-get install libxml2-utils)"))
    func exportsReadBackInTheirPublishedFormats() throws {
        let folder = try scratchDirectory()
        let data = folder.appendingPathComponent("class")
        let server = try ClassServerProcess(data: data)
        let names = ["Ada, \"the first\"", "=HYPERLINK(\"http://x\")", "Alan"]
        var submissions = names.enumerated().map { index, name in
            ClassFixtures.submission(name: name, key: ClassFixtures.key(), fixed: { _ in index == 0 })
        }
        submissions[2].checks = [submissions[2].checks[0]]
        submissions[2].checks[0].check = CheckRecord.buildCheck
        submissions[2].checks[0].status = .doesNotCompile
        for submission in submissions {
            #expect(try ClassHTTP.post(server.submissions, ClassFixtures.json(submission)).status == 200)
        }
        server.stop()

        let checks = Catalogue.lessons.flatMap { lesson in lesson.everyCheck.map { "\(lesson.id.number) \($0.id)" } }
        var summaries: [String: Any] = [:]
        for format in ClassExportFormat.allCases {
            let output = folder.appendingPathComponent(format.isOneFile ? "grades.\(format.rawValue)" : format.rawValue)
            let export = try ChildProcess.run("lab", ["class", "export", "--data", data.path, "--format", format.rawValue,
                                                      "-o", output.path])
            #expect(export.status == 0, "\(export.stderr)")
            let check = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"),
                                                    ["python3", ClassFormats.script.path, format.rawValue, output.path, ClassFormats.junitSchema.path])
            #expect(check.status == 0, "\(format): \(check.stderr)")
            summaries[format.rawValue] = try? JSONSerialization.jsonObject(with: Data(check.stdout.utf8))
        }
        let csv = try #require(summaries["csv"] as? [[String]])
        #expect(csv[0] == ["student"] + checks + ["fixed"])
        #expect(csv.dropFirst().map { $0[0] } == ["'=HYPERLINK(\"http://x\")", "Ada, \"the first\"", "Alan"])
        // 03's clean check is a baseline, which no code earns; its range check is counted.
        let lesson03 = try #require(Catalogue.lesson(named: "03"))
        let exercise03 = try #require(checks.firstIndex(of: "03 no-206-check")) + 1
        #expect(csv[1][exercise03] == "still failing")
        #expect(csv[2][exercise03] == "fixed")
        #expect(csv[3][exercise03] == "does not compile")
        #expect(csv.dropFirst().allSatisfy { $0[try! #require(checks.firstIndex(of: "03 clean")) + 1] == "baseline" })
        #expect(csv[3][1] == "not run")
        #expect(csv[2].last == "\(lesson03.countedChecks.count) of \(Catalogue.lessons.map(\.countedChecks.count).reduce(0, +))")
        let junit = try #require(summaries["junit"] as? [String: Int])
        #expect(junit == ["suites": 3, "cases": 3 * checks.count, "errors": lesson03.countedChecks.count,
                          "passes": lesson03.countedChecks.count])
        for format in ["exercism", "gradescope"] {
            let files = try #require(summaries[format] as? [String: String], "\(format)")
            #expect(files.count == 3)
        }

        // A link planted where a student's folder goes: refused, and nothing written where it points.
        let planted = folder.appendingPathComponent("planted"), elsewhere = folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: planted, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: planted.appendingPathComponent(ClassExport.folderName(for: "Alan")),
                                                   withDestinationURL: elsewhere)
        let refused = try ChildProcess.run("lab", ["class", "export", "--data", data.path, "--format", "gradescope", "-o", planted.path])
        #expect(refused.status == 73)
        #expect(refused.stderr.hasSuffix(" is not a folder; remove it, or export into another -o\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)

        let missing = try ChildProcess.run("lab", ["class", "export", "--data", folder.appendingPathComponent("none").path, "--format", "csv"])
        #expect(missing.status == 66)
        #expect(missing.stderr == "lab class export: no class in \(folder.appendingPathComponent("none").path): give the --data folder `lab class serve` used\n")
    }

    // MARK: What `lab class serve` cannot use

    @Test(arguments: [
        (["--listen", "nonsense"], Int32(64), "--listen: expected HOST:PORT, e.g. 0.0.0.0:8080, got \"nonsense\""),
        (["--listen", "127.0.0.1:99999"], 64, "--listen: the port must be a number from 0 to 65535, got \"99999\""),
        (["--listen", "example.com:80"], 64, "--listen: \"example.com\" is not an IP address; give one of this machine's, or 0.0.0.0 for all"),
        (["--listen", "192.0.2.1:8080"], 64, "--listen: 192.0.2.1 is not an address of this machine"),
    ])
    func serveRefusesAnAddressItCannotListenOn(arguments: [String], status: Int32, line: String) throws {
        let folder = try scratchDirectory()
        let refused = try ChildProcess.run("lab", ["class", "serve", "--data", folder.appendingPathComponent("class").path] + arguments,
                                           timeout: 30)
        #expect(refused.status == status)
        #expect(refused.stderr == "lab class serve: \(line)\n")
    }

    @Test func serveRefusesADataFolderItCannotWriteAndAPortInUse() throws {
        let folder = try scratchDirectory()
        let file = folder.appendingPathComponent("a-file")
        try Data("not a folder".utf8).write(to: file)
        let unwritable = try ChildProcess.run("lab", ["class", "serve", "--listen", "127.0.0.1:0", "--data", file.appendingPathComponent("class").path],
                                              timeout: 30)
        #expect(unwritable.status == 73)
        #expect(unwritable.stderr.hasPrefix("lab class serve: cannot create the data folder \(file.path)/class: "))
        #expect(unwritable.stderr.filter { $0 == "\n" }.count == 1)

        guard let taken = boundLoopbackSocket() else { throw ClassTestError("no free port") }
        defer { close(taken.descriptor) }
        #expect(listen(taken.descriptor, 1) == 0)
        let inUse = try ChildProcess.run("lab", ["class", "serve", "--listen", "127.0.0.1:\(taken.port)", "--data", folder.appendingPathComponent("class").path],
                                         timeout: 30)
        #expect(inUse.status == 69)
        #expect(inUse.stderr == "lab class serve: 127.0.0.1:\(taken.port) is in use by another program; stop it or pick another port\n")
    }
}
