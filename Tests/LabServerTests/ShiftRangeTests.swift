import LabFixtures
import LabServer
import LabVocabulary
import TestServers
import Testing

@Suite("The shift-range fault")
struct ShiftRangeTests {
    let fixture = Fixture(name: "shifty", size: 1 << 20)

    @Test("a 206 serves a range n bytes off, labelled truthfully", arguments: [
        ("shift-range:-100", "bytes=1000-", "bytes 900-1048575/1048576", Int64(900), 1_047_676),
        ("shift-range:+100", "bytes=1000-", "bytes 1100-1048575/1048576", 1100, 1_047_476),
        ("shift-range:-1KiB", "bytes=100-199", "bytes 0-199/1048576", 0, 200),
        ("shift-range:+500", "bytes=100-199", "bytes 199-199/1048576", 199, 1),
        ("shift-range:+100", "bytes=-50", "bytes 1048575-1048575/1048576", 1_048_575, 1),
        ("shift-range:+9223372036854775807", "bytes=1000-1009", "bytes 1009-1009/1048576", 1009, 1),
        ("shift-range:-64GiB", "bytes=1000-1009", "bytes 0-1009/1048576", 0, 1010),
    ])
    func shifted(faults: String, range: String, contentRange: String, first: Int64, length: Int) throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", fixturePath(fixture, faults: faults), headers: [("Range", range)])
            #expect(response.statusLine == "HTTP/1.1 206 Partial Content")
            #expect(response.header("Content-Range") == contentRange)
            #expect(response.header("Content-Length") == "\(length)")
            #expect(byteDifference(response.body, expectedBytes(fixture, from: first, count: length)) == nil)
            #expect(!response.closedEarly)
            #expect(server.requestLog.last?.range == range, "the log keeps the range that was asked for")
        }
    }

    @Test("a 200 or a 416 is left alone", arguments: [
        (nil as String?, nil as String?, 200, nil as String?, 1_048_576),
        ("bytes=1000-", "\"some-other-etag\"", 200, nil, 1_048_576),
        ("bytes=1048576-", nil, 416, "bytes */1048576", 0),
    ])
    func notPartial(range: String?, ifRange: String?, status: Int, contentRange: String?, length: Int) throws {
        try withLabServer { server in
            let headers = [("Range", range), ("If-Range", ifRange)].compactMap { name, value in value.map { (name, $0) } }
            let response = try fetch(server, "GET", fixturePath(fixture, faults: "shift-range:-100"), headers: headers)
            #expect(response.status == status)
            #expect(response.header("Content-Range") == contentRange)
            #expect(response.header("Content-Length") == "\(length)")
            #expect(byteDifference(response.body, expectedBytes(fixture, count: length)) == nil)
        }
    }

    @Test("HEAD with a Range shows the shifted headers without using up the attempt")
    func head() throws {
        try withLabServer { server in
            let path = fixturePath(fixture, faults: "shift-range:-100,ok")
            let range = [("Range", "bytes=1000-")]
            let preview = try fetch(server, "HEAD", path, headers: range)
            #expect(preview.statusLine == "HTTP/1.1 206 Partial Content")
            #expect(preview.header("Content-Range") == "bytes 900-1048575/1048576")
            #expect(preview.header("Content-Length") == "1047676")
            #expect(preview.body.isEmpty)

            // The GET that follows still plays attempt 1, shifted like its preview...
            let shifted = try fetch(server, "GET", path, headers: range)
            #expect(shifted.header("Content-Range") == "bytes 900-1048575/1048576")
            #expect(byteDifference(shifted.body, expectedBytes(fixture, from: 900)) == nil)
            // ...and attempt 2 is not shifted.
            let honest = try fetch(server, "GET", path, headers: range)
            #expect(honest.header("Content-Range") == "bytes 1000-1048575/1048576")
            #expect(honest.header("Content-Length") == "1047576")
            #expect(byteDifference(honest.body, expectedBytes(fixture, from: 1000)) == nil)
            #expect(server.requestLog.map(\.attempt) == [1, 1, 2])
        }
    }

    @Test("GET / lists shift-range in the same columns as the other faults")
    func documented() throws {
        try withLabServer { server in
            let lines = try fetch(server, "GET", "/").bodyText.split(separator: "\n")
            let shiftLine = try #require(lines.first { $0.contains("shift-range:") })
            let badLengthLine = try #require(lines.first { $0.contains("bad-length:") })
            #expect(shiftLine.drop(while: { $0 == " " }) == "shift-range:<+n|-n>      answer 206 with a range that starts n bytes off")
            #expect(shiftLine.firstRange(of: "answer")?.lowerBound.utf16Offset(in: shiftLine)
                == badLengthLine.firstRange(of: "declare")?.lowerBound.utf16Offset(in: badLengthLine))
        }
    }

    @Test("a bad shift is a 400 with one line naming the token")
    func badShift() throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", fixturePath(fixture, faults: "ok,shift-range:x"), headers: [("Range", "bytes=1000-")])
            #expect(response.status == 400)
            #expect(response.bodyText == "bad fault \"shift-range:x\": expected +n or -n\n")
            #expect(server.requestLog.last?.attempt == 0, "a rejected request plays no attempt")
        }
    }
}
