import Foundation
import LabFixtures
import LabServer
import LabVocabulary
import TestServers
import Testing

@Suite("Attempt counting")
struct AttemptTests {
    let fixture = Fixture(name: "counted", size: 2000)

    @Test("each run token has its own attempt counter")
    func runTokens() throws {
        try withLabServer { server throws in
            let statuses = try ["a", "b", "a", "b", "c"].map { run in
                try fetch(server, "GET", fixturePath(fixture, faults: "status:500,ok", run: run)).status
            }
            #expect(statuses == [500, 500, 200, 200, 500])
        }
    }

    @Test("HEAD previews the next attempt without using it up")
    func headDoesNotConsume() throws {
        try withLabServer { server throws in
            let path = fixturePath(fixture, faults: "status:503,change")
            #expect(try fetch(server, "HEAD", path).status == 503)
            #expect(try fetch(server, "HEAD", path).status == 503)
            #expect(try fetch(server, "GET", path).status == 503)
            // The preview of attempt 2 already shows the changed entity...
            let preview = try fetch(server, "HEAD", path)
            let changedTag = Fixture(name: fixture.name, size: fixture.size, generation: 1).etag
            #expect(preview.status == 200 && preview.header("ETag") == changedTag)
            // ...and the GET that follows is that attempt.
            let get = try fetch(server, "GET", path)
            #expect(get.header("ETag") == changedTag)
            #expect(server.requestLog.map(\.attempt) == [1, 1, 1, 2, 2])
        }
    }

    @Test("attempt=N plays attempt N without moving the counter")
    func pinnedAttempt() throws {
        try withLabServer { server throws in
            let path = fixturePath(fixture, faults: "status:500,status:404,ok")
            #expect(try fetch(server, "GET", path + "&attempt=2").status == 404)
            #expect(try fetch(server, "GET", path + "&attempt=3").status == 200)
            #expect(try fetch(server, "GET", path).status == 500)
            #expect(try fetch(server, "GET", path).status == 404)
        }
    }

    @Test("the request log records what was asked and answered")
    func requestLog() throws {
        let server = try LabServer.start()
        defer { server.stop() }
        let path = fixturePath(fixture, faults: "drop:10,ok")
        _ = try fetch(server, "GET", path, headers: [("Range", "bytes=5-"), ("If-Range", fixture.etag)])
        _ = try fetch(server, "HEAD", path)
        // The time to first byte is measured, not known in advance: it is checked apart.
        #expect(server.requestLog.allSatisfy { (0..<5).contains($0.firstByteSeconds) })
        // Arrived within the test, and the 206's last bytes after it arrived: on the run's clock.
        let now = Date().timeIntervalSince1970
        #expect(server.requestLog.allSatisfy { (now - 60...now).contains($0.arrivedAt) })
        let partial = try #require(server.requestLog.first)
        #expect(partial.lastBodyBytesAt.map { $0 >= partial.arrivedAt } == true)
        let logged = server.requestLog.map { request in
            var request = request
            (request.firstByteSeconds, request.arrivedAt, request.lastBodyBytesAt) = (0, 0, nil)
            return request
        }
        #expect(logged == [
            LoggedRequest(method: .get, target: path, range: "bytes=5-", ifRange: fixture.etag,
                          status: 206, bodyBytesSent: 10, attempt: 1, responseLength: 1995),
            LoggedRequest(method: .head, target: path, range: nil, ifRange: nil,
                          status: 200, bodyBytesSent: 0, attempt: 2, responseLength: 2000),
        ])
    }
}
