import Foundation
import LabFixtures
import LabKit
import LabServer
import LabVocabulary
import Testing

/// `foundation-floor`, the bare URLSession download that `lab compare` measures beside curl, run
/// as a child process against the lab server.
@Suite(.serialized)
struct FoundationFloorTests {
    private let bench: TestBench
    private var server: LabServer { bench.server }
    private var directory: URL { bench.directory }

    init() throws { bench = try TestBench() }

    @Test func savesTheFileByteForByteAndSaysNothing() throws {
        let fixture = Fixture(name: "floor.bin", size: 24 << 20 | 12_345)
        let file = directory.appendingPathComponent("floor.bin")
        let finished = try ChildProcess.run("foundation-floor", [server.url(for: fixture, faults: nil, run: "floor").absoluteString, file.path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stdout.isEmpty && finished.stderr.isEmpty)
        #expect(PartialFile.size(of: file) == fixture.size)
        #expect(try FileDigest.sha256Hex(of: file) == fixture.sha256Hex())
    }

    @Test(arguments: [
        ([String](), 64, "foundation-floor: usage: foundation-floor http://HOST/PATH FILE"),
        (["ftp://127.0.0.1/x", "out.bin"], 64, "foundation-floor: usage: foundation-floor http://HOST/PATH FILE"),
        (["SERVER/nothing-here", "out.bin"], 69, "foundation-floor: the server answered HTTP 404, not 200"),
        (["SERVER/fixtures/a.bin?size=1MiB&faults=drop:50pct", "out.bin"], 69, "foundation-floor: "),
        (["SERVER/fixtures/a.bin?size=1MiB", "missing-folder/out.bin"], 74, "foundation-floor: cannot create "),
    ])
    func badInputIsOneLine(arguments: [String], status: Int32, message: String) throws {
        let arguments = arguments.map {
            $0.replacingOccurrences(of: "SERVER", with: server.baseURL.absoluteString.trimmingCharacters(in: ["/"]))
              .replacingOccurrences(of: "out.bin", with: directory.appendingPathComponent("out.bin").path)
              .replacingOccurrences(of: "missing-folder", with: directory.appendingPathComponent("missing").path)
        }
        let finished = try ChildProcess.run("foundation-floor", arguments)
        #expect(finished.status == status, "\(finished.stderr)")
        let lines = finished.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines.first?.hasPrefix(message) == true, "\(finished.stderr)")
    }
}
