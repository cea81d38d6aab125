import Foundation
import TestFolders
import LabFixtures
import LabServer
import LabVocabulary
import Synchronization
import TestServers
import TestThreads
import Testing

/// `gzip` as nginx's gzip filter does it: compressed for a client that accepts gzip, with the
/// compressed length, no ranges, a weak ETag and `Vary`; the file as it is for any other client.
@Suite("The gzip fault")
struct GzipTests {
    let text = Fixture(name: "log", size: 1 << 20, content: .text)

    /// The body decoded by the system's own gzip, a decoder apart from the server's zlib.
    static func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        let folder = TestFolders.root.appendingPathComponent("gzip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let compressed = folder.appendingPathComponent("body.gz")
        try Data(bytes).write(to: compressed)
        let process = Process()
        // From PATH: Debian keeps gzip in /bin, macOS in /usr/bin.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gzip", "-dc", compressed.path]
        let decoded = folder.appendingPathComponent("body")
        _ = FileManager.default.createFile(atPath: decoded.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: decoded)
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw LabError("gzip -dc exited \(process.terminationStatus)") }
        return Array(try Data(contentsOf: decoded))
    }

    @Test("a client that accepts gzip gets the text compressed, with the compressed length")
    func compressed() throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", fixturePath(text, faults: "gzip"), headers: [("Accept-Encoding", "gzip, deflate")])
            #expect(response.status == 200)
            #expect(response.header("Content-Encoding") == "gzip")
            #expect(response.header("Content-Length") == String(response.body.count))
            #expect(response.header("Vary") == "Accept-Encoding")
            #expect(response.header("ETag") == "W/" + text.etag)
            #expect(response.header("Accept-Ranges") == nil)
            #expect(response.header("Repr-Digest") == nil)
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
            // Lines of a log: gzip at level 1 takes them to about a quarter.
            #expect(response.body.count < text.size / 3)
            #expect(byteDifference(try Self.gunzip(response.body), expectedBytes(text)) == nil)
            // The same bytes every time: the length measured first is the length sent.
            let again = try fetch(server, "GET", fixturePath(text, faults: "gzip", extra: "attempt=1"), headers: [("Accept-Encoding", "gzip")])
            #expect(again.body == response.body)
            let head = try fetch(server, "HEAD", fixturePath(text, faults: "gzip", extra: "attempt=1"), headers: [("Accept-Encoding", "gzip")])
            #expect(head.header("Content-Length") == String(response.body.count))
        }
    }

    @Test("a Range is ignored when the body is compressed, and honoured when it is not")
    func rangeAndEncoding() throws {
        try withLabServer { server in
            let compressed = try fetch(server, "GET", fixturePath(text, faults: "gzip,gzip"),
                                       headers: [("Accept-Encoding", "gzip"), ("Range", "bytes=1000-")])
            #expect(compressed.status == 200)
            #expect(compressed.header("Content-Range") == nil)
            #expect(byteDifference(try Self.gunzip(compressed.body), expectedBytes(text)) == nil)
            let identity = try fetch(server, "GET", fixturePath(text, faults: "gzip,gzip"),
                                     headers: [("Accept-Encoding", "identity"), ("Range", "bytes=1000-")])
            #expect(identity.status == 206)
            #expect(identity.header("Content-Encoding") == nil)
            #expect(identity.header("Vary") == "Accept-Encoding")
            #expect(identity.header("ETag") == text.etag)
            #expect(identity.header("Content-Range") == "bytes 1000-1048575/1048576")
            #expect(byteDifference(identity.body, expectedBytes(text, from: 1000)) == nil)
        }
    }

    @Test("Accept-Encoding decides, weights included", arguments: [
        (nil as String?, false), ("gzip", true), ("GZIP;q=0.5", true), ("gzip;q=0", false), ("identity", false),
        ("*", true), ("*;q=0", false), ("br, *;q=0.1", true), ("gzip;q=0, *", false), ("x-gzip", true), ("deflate, br", false),
        ("x-gzip;q=0, gzip", true), ("gzip;q=0, x-gzip;q=0.2", true), ("x-gzip;q=0", false),
    ])
    func acceptEncoding(header: String?, compressed: Bool) throws {
        try withLabServer { server in
            let response = try fetch(server, "HEAD", fixturePath(text, faults: "gzip"), headers: header.map { [("Accept-Encoding", $0)] } ?? [])
            #expect((response.header("Content-Encoding") == "gzip") == compressed)
        }
    }

    /// More large fixtures to compress at once than the server measures at once: the ones past
    /// the limit wait their turn, and every first GET plays the script's first attempt, 200 and
    /// compressed. Answered 503 instead, they used up that attempt.
    @Test("compressions past the limit wait their turn instead of using up an attempt")
    func compressionsPastTheLimitWait() throws {
        try withLabServer { server in
            let count = 10
            let answers = Mutex<[Int: Int]>([:])
            let finished = DispatchGroup()
            // A thread each, all at once: a dispatch queue would run only as many as there are cores.
            for index in 0..<count {
                finished.enter()
                Thread {
                    let fixture = Fixture(name: "busy-\(index)", size: 20 << 20, content: .text)
                    let response = try? fetch(server, "GET", fixturePath(fixture, faults: "gzip,status:500"),
                                              headers: [("Accept-Encoding", "gzip")], timeout: 60)
                    answers.withLock { $0[index] = response?.status ?? -1 }
                    finished.leave()
                }.start()
            }
            finished.wait()
            #expect(answers.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<count).map { ($0, 200) }))
            #expect(server.requestLog.filter { $0.target.contains("busy-") }.allSatisfy { $0.attempt == 1 && $0.status == 200 })
        }
    }

    @Test("a drop under gzip cuts the compressed body at its own percentage")
    func dropCutsTheCompressedBody() throws {
        try withLabServer { server in
            let whole = try fetch(server, "GET", fixturePath(text, faults: "gzip"), headers: [("Accept-Encoding", "gzip")])
            let dropped = try fetch(server, "GET", fixturePath(text, faults: "gzip+drop:40pct"), headers: [("Accept-Encoding", "gzip")],
                                    untilClose: true)
            #expect(dropped.header("Content-Length") == String(whole.body.count))
            #expect(dropped.body == Array(whole.body.prefix(whole.body.count * 40 / 100)))
        }
    }

    @Test("the script's text is the file of every attempt and of its .sha256, with content=text too")
    func textContent() throws {
        try withLabServer { server in
            let plain = try fetch(server, "GET", fixturePath(text, faults: "ok,gzip"))
            #expect(plain.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(byteDifference(plain.body, expectedBytes(text)) == nil)
            #expect(plain.bodyText.hasPrefix("00000000 "))
            let checksum = try fetch(server, "GET", "/fixtures/log.sha256?size=1048576&faults=gzip")
            #expect(checksum.bodyText == oneShotSHA256Hex(expectedBytes(text)) + "  log\n")
            let asked = try fetch(server, "GET", fixturePath(text, extra: "content=text"))
            #expect(byteDifference(asked.body, expectedBytes(text)) == nil)
            #expect(server.url(for: text).absoluteString.hasSuffix("content=text"))
            let bad = try fetch(server, "GET", fixturePath(text, extra: "content=rtf"))
            #expect(bad.status == 400)
            #expect(bad.bodyText == "bad content \"rtf\": expected binary or text\n")
        }
    }
}
