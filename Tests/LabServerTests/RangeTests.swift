import Foundation
import LabFixtures
import LabServer
import LabVocabulary
import TestServers
import Testing

@Suite("Full and Range responses")
struct RangeTests {
    let fixture = Fixture(name: "range.bin", size: 1 << 20)

    @Test("GET sends the whole fixture with validators and its digest")
    func fullGet() throws {
        try withLabServer { server throws in
            let response = try fetch(server, "GET", fixturePath(fixture))
            #expect(response.statusLine == "HTTP/1.1 200 OK")
            #expect(response.header("Content-Length") == "1048576")
            #expect(response.header("Content-Type") == "application/octet-stream")
            #expect(response.header("Accept-Ranges") == "bytes")
            #expect(response.header("ETag") == fixture.etag)
            #expect(response.header("Last-Modified") == "Mon, 01 Jan 2024 00:00:00 GMT")
            #expect(response.header("Content-Range") == nil)
            #expect(byteDifference(response.body, expectedBytes(fixture)) == nil)
            #expect(!response.closedEarly)
            // The digest header, checked against an independent SHA-256 of the received bytes.
            let digest = oneShotSHA256(response.body).base64EncodedString()
            #expect(response.header("Repr-Digest") == "sha-256=:\(digest):")
        }
    }

    @Test("size defaults to 1 MiB and accepts units")
    func sizes() throws {
        try withLabServer { server throws in
            #expect(try fetch(server, "HEAD", "/fixtures/x").header("Content-Length") == "1048576")
            #expect(try fetch(server, "HEAD", "/fixtures/x?size=64MiB").header("Content-Length") == "67108864")
            #expect(try fetch(server, "HEAD", "/fixtures/x?size=5KB").header("Content-Length") == "5000")
        }
    }

    @Test("Range forms", arguments: [
        ("bytes=1000-", "bytes 1000-1048575/1048576", Int64(1000), 1_047_576),
        ("bytes=0-0", "bytes 0-0/1048576", 0, 1),
        ("bytes=100-199", "bytes 100-199/1048576", 100, 100),
        ("bytes=-500", "bytes 1048076-1048575/1048576", 1_048_076, 500),
        ("bytes=-2000000", "bytes 0-1048575/1048576", 0, 1_048_576),
        ("bytes=1048000-9999999", "bytes 1048000-1048575/1048576", 1_048_000, 576),
        ("bytes=1048575-1048575", "bytes 1048575-1048575/1048576", 1_048_575, 1),
        ("bytes=7-99999999999999999999999", "bytes 7-1048575/1048576", 7, 1_048_569),
    ])
    func partial(range: String, contentRange: String, first: Int64, length: Int) throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", fixturePath(fixture), headers: [("Range", range)])
            #expect(response.statusLine == "HTTP/1.1 206 Partial Content")
            #expect(response.header("Content-Range") == contentRange)
            #expect(response.header("Content-Length") == "\(length)")
            #expect(response.header("ETag") == fixture.etag)
            #expect(response.header("Repr-Digest") == expectedReprDigest(fixture), "the digest describes the whole file")
            #expect(byteDifference(response.body, expectedBytes(fixture, from: first, count: length)) == nil)
        }
    }

    @Test("unsatisfiable ranges get 416 with bytes */size", arguments: [
        ("bytes=1048576-", Int64(1 << 20)), ("bytes=2000000-2000001", 1 << 20), ("bytes=-0", 1 << 20),
        ("bytes=0-", 0), ("bytes=-5", 0),
    ])
    func unsatisfiable(range: String, size: Int64) throws {
        try withLabServer { server in
            let fixture = Fixture(name: "range.bin", size: size)
            let response = try fetch(server, "GET", fixturePath(fixture), headers: [("Range", range)])
            #expect(response.statusLine == "HTTP/1.1 416 Range Not Satisfiable")
            #expect(response.header("Content-Range") == "bytes */\(size)")
            #expect(response.header("Content-Length") == "0")
            #expect(response.header("ETag") == fixture.etag)
            #expect(response.header("Last-Modified") == fixture.lastModified)
            #expect(response.header("Accept-Ranges") == "bytes")
            #expect(response.body.isEmpty)
        }
    }

    @Test("malformed and multiple ranges are ignored: 200 with the full body", arguments: [
        "bytes:100-", "bytes=5-3", "bytes=abc", "items=0-10", "", "bytes=", "bytes=-", "bytes=1-2-3",
        "bytes=0-1,4-5", "bytes=0-1, 4-5", "bytes=+5-10",
    ])
    func ignoredRanges(range: String) throws {
        try withLabServer { server in
            let small = Fixture(name: "ignored", size: 10_000)
            let response = try fetch(server, "GET", fixturePath(small), headers: [("Range", range)])
            #expect(response.status == 200)
            #expect(response.header("Content-Range") == nil)
            #expect(response.header("Content-Length") == "10000")
            #expect(byteDifference(response.body, expectedBytes(small)) == nil)
        }
    }

    @Test("If-Range decides between 206 and 200", arguments: [
        ("etag", 206), ("date", 206), ("\"0000000000000000\"", 200), ("weak", 200),
        ("Tue, 02 Jan 2024 00:00:00 GMT", 200), ("Mon, 1 Jan 2024 00:00:00 GMT", 200), ("garbage", 200),
    ])
    func ifRange(validator: String, status: Int) throws {
        try withLabServer { server in
            let ifRange = switch validator {
            case "etag": fixture.etag
            case "date": fixture.lastModified
            case "weak": "W/" + fixture.etag
            default: validator
            }
            let response = try fetch(server, "GET", fixturePath(fixture), headers: [("Range", "bytes=100-"), ("If-Range", ifRange)])
            #expect(response.status == status)
            if status == 206 {
                #expect(response.header("Content-Range") == "bytes 100-1048575/1048576")
                #expect(byteDifference(response.body, expectedBytes(fixture, from: 100)) == nil)
            } else {
                #expect(response.header("Content-Range") == nil)
                #expect(byteDifference(response.body, expectedBytes(fixture)) == nil)
            }
        }
    }

    @Test("If-Range without Range is ignored")
    func ifRangeAlone() throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", fixturePath(fixture), headers: [("If-Range", "\"nope\"")])
            #expect(response.status == 200)
            #expect(response.body.count == 1 << 20)
        }
    }

    @Test("HEAD answers with exactly the headers of the same GET", arguments: [
        nil, "bytes=10-", "bytes=-0", "bytes=0-1,4-5", "bytes=5-3",
    ])
    func headMirrorsGet(range: String?) throws {
        try withLabServer { server in
            let headers = range.map { [("Range", $0)] } ?? []
            let get = try fetch(server, "GET", fixturePath(fixture), headers: headers)
            let head = try fetch(server, "HEAD", fixturePath(fixture), headers: headers)
            #expect(head.statusLine == get.statusLine)
            #expect(head.headers == get.headers)
            #expect(head.body.isEmpty)
        }
    }

    @Test("keep-alive: several responses on one connection")
    func keepAlive() throws {
        try withLabServer { server in
            let small = Fixture(name: "keep", size: 3000)
            let connection = try RawHTTPConnection(port: server.port)
            try connection.sendRequest("GET", fixturePath(small), headers: [("Range", "bytes=0-9")])
            let first = try connection.readResponse()
            try connection.sendRequest("HEAD", fixturePath(small))
            let second = try connection.readResponse(isHead: true)
            try connection.sendRequest("GET", fixturePath(small))
            let third = try connection.readResponse()
            #expect(first.status == 206)
            #expect(byteDifference(first.body, expectedBytes(small, count: 10)) == nil)
            #expect(second.status == 200 && second.header("Content-Length") == "3000")
            #expect(third.status == 200)
            #expect(byteDifference(third.body, expectedBytes(small)) == nil)
            #expect(server.requestLog.count == 3)
        }
    }

    @Test("Connection: close is honoured")
    func connectionClose() throws {
        try withLabServer { server in
            let connection = try RawHTTPConnection(port: server.port)
            try connection.sendRequest("GET", "/", headers: [("Connection", "close")])
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.header("Connection") == "close")
            #expect(connection.serverCloses(within: 2))
        }
    }
}
