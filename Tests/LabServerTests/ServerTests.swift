import Foundation
import LabFixtures
import LabServer
import LabVocabulary
import TestServers
import Testing

@Suite("Server endpoints and lifecycle")
struct ServerTests {
    @Test("GET / explains the URLs and the fault syntax")
    func index() throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", "/")
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(response.bodyText.contains("/fixtures/<name>?size="))
            #expect(response.bodyText.contains("faults=drop:40pct,ok"))
            #expect(response.bodyText.contains("faults=redirect:3"))
        }
    }

    @Test("unknown paths and bad names are 404", arguments: [
        "/nope", "/fixtures/", "/fixtures/a/b", "/fixtures/bad%20name", "/fixtures/" + String(repeating: "x", count: 65),
    ])
    func notFound(target: String) throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", target)
            #expect(response.status == 404)
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(isOneLine(response.bodyText))
        }
    }

    @Test("other methods are 405 with Allow", arguments: ["POST", "PUT", "DELETE"])
    func methodNotAllowed(method: String) throws {
        try withLabServer { server in
            let connection = try RawHTTPConnection(port: server.port)
            try connection.sendRequest(method, "/fixtures/a", headers: [("Content-Length", "0")])
            let response = try connection.readResponse()
            #expect(response.status == 405)
            #expect(response.header("Allow") == "GET, HEAD")
        }
    }

    @Test("bad sizes are 400 with one line", arguments: [
        ("abc", "bad size \"abc\": expected a byte count like 1000, 64KiB, 64MiB, 1GiB or 5MB\n"),
        ("65GiB", "bad size \"65GiB\": the largest fixture is 64GiB\n"),
        // A compressed length is measured before the head: past 1 GiB a client would time out first.
        ("1073741825&faults=drop:1,gzip", "gzip serves files up to 1 GiB: the compressed length is measured before the answer, "
            + "and a larger file would keep the client waiting past its time-out\n"),
    ])
    func badSize(size: String, message: String) throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", "/fixtures/a?size=\(size)")
            #expect(response.status == 400)
            #expect(response.bodyText == message)
        }
    }

    @Test(".sha256 answers in sha256sum format")
    func checksumEndpoint() throws {
        try withLabServer { server in
            let fixture = Fixture(name: "sum.bin", size: 3 << 20)
            let response = try fetch(server, "GET", "/fixtures/sum.bin.sha256?size=3MiB")
            #expect(response.status == 200)
            #expect(response.bodyText == "\(fixture.sha256Hex())  sum.bin\n")
            #expect(fixture.sha256Hex() == oneShotSHA256Hex(expectedBytes(fixture)))
        }
    }

    @Test("ETag, Last-Modified and digest survive a restart")
    func restart() throws {
        let fixture = Fixture(name: "stable", size: 100_000)
        var seen: [[String?]] = []
        for _ in 0..<2 {
            let server = try LabServer.start()
            let response = try fetch(server, "HEAD", fixturePath(fixture))
            seen.append(["ETag", "Last-Modified", "Repr-Digest"].map(response.header))
            server.stop()
        }
        #expect(seen[0] == seen[1])
        #expect(seen[0] == [fixture.etag, fixture.lastModified, expectedReprDigest(fixture)])
    }

    @Test("stop returns promptly while a client is stalled, and closes it")
    func stopWithStalledClient() throws {
        let server = try LabServer.start()
        let connection = try RawHTTPConnection(port: server.port, receiveTimeout: 0.5)
        try connection.sendRequest("GET", "/fixtures/s?size=1MiB&faults=stall:1000")
        let stalled = try connection.readResponse()
        #expect(stalled.timedOut && stalled.body.count == 1000)
        let (_, seconds) = measure { server.stop() }
        #expect(seconds < 1)
        #expect(connection.serverCloses(within: 2))
        server.stop() // idempotent
    }

    @Test("url(for:) builds fixture URLs the server understands")
    func urls() throws {
        try withLabServer { server in
            #expect(server.host == "127.0.0.1")
            #expect(server.port > 0)
            #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
            let url = server.url(for: Fixture(name: "u", size: 64 << 20, generation: 3), faults: "throttle:4MiB+drop:1MiB", run: "x y")
            #expect(url.absoluteString == "http://127.0.0.1:\(server.port)/fixtures/u?size=67108864&faults=throttle:4MiB+drop:1MiB&run=x%20y")
            let response = try fetch(server, "HEAD", String(url.absoluteString.dropFirst(server.baseURL.absoluteString.count)))
            #expect(response.status == 200)
        }
    }

    @Test("a port in use is a one-line error")
    func portInUse() throws {
        try withLabServer { server in
            #expect(throws: LabError("cannot listen on 127.0.0.1:\(server.port): address already in use")) {
                try LabServer.start(port: server.port)
            }
        }
    }

    @Test("async start and stop")
    func asyncLifecycle() async throws {
        let server = try await LabServer.startAsync()
        let port = server.port
        let response = try fetch(server, "HEAD", "/fixtures/a?size=10")
        #expect(response.status == 200)
        await server.stopAsync()
        // The port is free again, and another test's server may take it at once: what counts is
        // that this one answers nothing. A request that still reaches a listener there is not in
        // this server's log.
        let logged = server.requestLog.count
        if let connection = try? RawHTTPConnection(port: port, receiveTimeout: 2) {
            try? connection.sendRequest("HEAD", "/fixtures/a?size=10")
            _ = try? connection.readResponse(isHead: true)
        }
        #expect(server.requestLog.count == logged)
    }
}
