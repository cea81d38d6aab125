import Foundation
import LabCatalogue
import LabFixtures
import LabVocabulary
import TestServers
import Testing

/// What the archives are checked with.
let harCheckNeeds: Comment = "python3 with the jsonschema package (python3 -m pip install jsonschema) checks each archive against HAR 1.2"

/// Whether python3 is on PATH and imports jsonschema.
let harCanBeChecked: Bool = {
    guard let finished = try? ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", "import jsonschema"],
                                                      timeout: 60) else { return false }
    return finished.status == 0
}()

/// `--har`: every lesson's archive is HAR 1.2, checked with the jsonschema package against the
/// specification's objects (Support/HAR), and says what the run's record says; what a server
/// sends stays data in it. Where python3 cannot import jsonschema (a stock Mac), these tests are
/// skipped and say why; in CI, which installs it, they run and fail without it.
@Suite(.enabled(if: runningInCI || harCanBeChecked, harCheckNeeds))
struct HARTests {
    static let checker = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Support/HAR/har_check.py")

    /// Checks `files`; returns each one's entries as [method, url, status, bodySize, time].
    static func check(_ files: [URL]) throws -> [[[Any]]] {
        let finished = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["python3", checker.path] + files.map(\.path))
        #expect(finished.status == 0, "\(finished.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(finished.stdout.utf8)) as? [[[Any]]])
    }

    @Test(arguments: LessonID.allCases)
    func everyLessonsArchiveIsHAR12AndSaysWhatItsRecordSays(lesson: LessonID) throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive = folder.appendingPathComponent("run.har")
        var arguments = ["--size", "1MiB", "--json", "--quiet", "--har", archive.path, "--output", folder.appendingPathComponent("out").path]
        arguments += Catalogue.lesson(lesson).compareArguments + (lesson == .backgroundSession ? ["--life", ""] : [])
        let finished = try ChildProcess.run(lesson.executable, arguments, timeout: 120)
        #expect(finished.status == 0, "\(finished.stderr)")
        let record = try finished.result()
        let entries = try #require(try Self.check([archive]).first)
        let timed = record.requests.filter { $0.startedAt != nil }
        #expect(!timed.isEmpty && timed.count == record.requests.count, "every exchange is timed: \(record.requests)")
        #expect(entries.count == timed.count)
        for (entry, exchange) in zip(entries, timed) {
            #expect(entry[0] as? String == exchange.method.rawValue && entry[1] as? String == exchange.url, "\(entry)")
            #expect(entry[2] as? Int == exchange.status ?? 0)
            #expect((entry[3] as? NSNumber)?.int64Value == (exchange.status == nil ? -1 : exchange.bodyBytes))
        }
    }

    /// A server's ETag and headers, and a URL, made to break out of JSON or into markup: the
    /// archive is still HAR, and holds each byte of them as a string.
    @Test func hostileValuesStayData() throws {
        let etag = "\"<svg onload=alert(1)>\\\" }, {\"name\": \"x"
        let evil = "</script><img src=x onerror=alert(2)> \\u0000 \\n"
        let server = try CannedHTTPServer(answer: Data("HTTP/1.1 200 OK\r\nContent-Length: 10\r\nETag: \(etag)\r\nX-Evil: \(evil)\r\n\r\n0123456789".utf8))
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive = folder.appendingPathComponent("hostile.har")
        let url = "http://127.0.0.1:\(server.port)/%3Cscript%3Ealert(3)%3C%2Fscript%3E%22.bin?q=%22%3E%3Cb%3E"
        let body = folder.appendingPathComponent("body")
        try Data("0123456789".utf8).write(to: body)
        let digest = try FileDigest.sha256Hex(of: body)
        let finished = try ChildProcess.run(LessonID.outputStream.executable,
                                            ["--url", url, "--sha256", digest, "--output", folder.appendingPathComponent("f.bin").path, "--har", archive.path])
        #expect(finished.status == 0, "\(finished.stderr)")
        _ = try Self.check([archive])
        let har = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: archive)) as? [String: Any])
        let entry = try #require(((har["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.last)
        let headers = (entry["response"] as? [String: Any])?["headers"] as? [[String: String]] ?? []
        #expect(headers.contains { $0["name"]?.lowercased() == "etag" && $0["value"] == etag }, "\(headers)")
        #expect(headers.contains { $0["name"] == "X-Evil" && $0["value"] == evil }, "\(headers)")
        #expect((entry["request"] as? [String: Any])?["url"] as? String == url)
    }
}
