import Foundation
import LabFixtures
@testable import LabServer
import LabVocabulary
import TestServers
import Testing

/// Clients that make the server do work and leave, or send what is not HTTP.
@Suite("The server under hostile clients")
struct HostileClientTests {
    /// Polls `condition` every 10 ms for up to `seconds`.
    static func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// The slowest of five GETs of a fresh 10-byte fixture, each on a new connection.
    static func slowestSmallRequest(_ server: LabServer, label: String) throws -> Double {
        var slowest = 0.0
        for index in 0..<5 {
            let started = Date()
            let response = try fetch(server, "GET", "/fixtures/\(label)\(index)?size=10")
            slowest = max(slowest, Date().timeIntervalSince(started))
            #expect(response.status == 200)
            #expect(response.body.count == 10)
            #expect(response.header("Repr-Digest") != nil)
        }
        return slowest
    }

    @Test("HEADs of 2 GiB fixtures, closed at once, leave no digest work and delay no one")
    func abandonedLargeHeads() throws {
        try withLabServer { server in
            for index in 0..<4 {
                let connection = try RawHTTPConnection(port: server.port)
                try connection.sendRequest("HEAD", "/fixtures/starve\(index)?size=2GiB")
                // The connection closes here, as the client walks away.
            }
            let slowest = try Self.slowestSmallRequest(server, label: "small")
            #expect(slowest < 0.1, "a 10-byte fixture took \(slowest) s")
            #expect(Self.eventually(within: 5) { server.digestComputationsUnderWay == 0 },
                    "\(server.digestComputationsUnderWay) digest computations still under way")
        }
    }

    @Test("four clients waiting for 2 GiB digests never hold up a small request, and leaving stops the work")
    func largeDigestsShareTheThreads() throws {
        try withLabServer { server in
            var waiting: [RawHTTPConnection] = []
            for index in 0..<4 {
                let connection = try RawHTTPConnection(port: server.port)
                try connection.sendRequest("GET", "/fixtures/large\(index).sha256?size=2GiB")
                waiting.append(connection)
            }
            #expect(Self.eventually(within: 5) { server.digestComputationsUnderWay == 4 })
            let slowest = try Self.slowestSmallRequest(server, label: "beside")
            #expect(slowest < 0.1, "a 10-byte fixture took \(slowest) s while 4 large digests ran")
            #expect(server.digestComputationsUnderWay == 4, "the large ones go on while their clients wait")

            waiting.removeAll()  // the four clients hang up
            #expect(Self.eventually(within: 5) { server.digestComputationsUnderWay == 0 },
                    "\(server.digestComputationsUnderWay) digest computations still under way")
        }
    }

    @Test("a ninth large digest at once is refused with 503 and Retry-After")
    func largeDigestsAreBounded() throws {
        try withLabServer { server in
            var waiting: [RawHTTPConnection] = []
            for index in 0..<DigestWork.maximumComputations {
                let connection = try RawHTTPConnection(port: server.port)
                try connection.sendRequest("GET", "/fixtures/bound\(index).sha256?size=2GiB")
                waiting.append(connection)
            }
            #expect(Self.eventually(within: 5) { server.digestComputationsUnderWay == DigestWork.maximumComputations })
            let refused = try fetch(server, "GET", "/fixtures/one-more.sha256?size=2GiB")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(isOneLine(refused.bodyText))
            // A small fixture is never refused.
            let small = try fetch(server, "GET", "/fixtures/tiny.sha256?size=10")
            #expect(small.status == 200)
            #expect(small.bodyText == oneShotSHA256Hex(expectedBytes(Fixture(name: "tiny", size: 10))) + "  tiny\n")
            waiting.removeAll()
            #expect(Self.eventually(within: 5) { server.digestComputationsUnderWay == 0 })
        }
    }

    @Test("a fixture larger than 16 MiB is answered at once, without Repr-Digest until the server knows it")
    func largeFixtureIsNeverWaitedFor() throws {
        try withLabServer { server in
            let started = Date()
            let head = try fetch(server, "HEAD", "/fixtures/unhashed?size=4GiB")
            #expect(Date().timeIntervalSince(started) < 1)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == "\(4 << 30)")
            #expect(head.header("Repr-Digest") == nil)
            #expect(head.header("ETag") != nil)

            // A client that asks for the digest (RFC 9530) waits for it.
            let asked = try fetch(server, "HEAD", "/fixtures/wanted?size=17MiB", headers: [("Want-Repr-Digest", "sha-256=10")])
            #expect(asked.header("Repr-Digest") == expectedReprDigest(Fixture(name: "wanted", size: 17 << 20)))

            // Once hashed (here through the checksum endpoint), every response carries the digest.
            let fixture = Fixture(name: "hashed", size: 17 << 20)
            let checksum = try fetch(server, "GET", "/fixtures/hashed.sha256?size=17MiB")
            #expect(checksum.status == 200)
            let later = try fetch(server, "HEAD", "/fixtures/hashed?size=17MiB")
            #expect(later.header("Repr-Digest") == expectedReprDigest(fixture))
        }
    }

    static let malformed: [(String, [UInt8])] = [
        ("binary garbage", [0x00, 0x01] + Array("garbage\r\n\r\n".utf8)),
        ("a 100 KB request line", Array("GET /\(String(repeating: "a", count: 100_000)) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)),
        ("a 1 MB header", Array("GET / HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 1_000_000))\r\n\r\n".utf8)),
        ("a bad chunk size", Array("GET /fixtures/x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".utf8)),
    ]

    @Test("a malformed request gets 400 and the connection closes", arguments: malformed)
    func malformedRequestCloses(label: String, request: [UInt8]) throws {
        try withLabServer { server in
            let connection = try RawHTTPConnection(port: server.port, receiveTimeout: 5)
            // The server may stop reading a huge request half-way; what matters is what it answers.
            try? connection.write(bytes: request)
            let response = try connection.readResponse()
            #expect(response.status == 400, "\(label): \(response.statusLine)")
            #expect(response.header("Connection") == "close")
            #expect(connection.serverCloses(within: 2), "\(label): the connection stayed open")
        }
    }
}
