import LabFixtures
@testable import LabServer
import TestServers
import Testing

/// RFC 9110's conditional GET, decided before any byte is chosen: `If-None-Match` by the weak
/// comparison, and without it `If-Modified-Since`.
@Suite("Conditional requests")
struct ConditionalRequestTests {
    static let etag = "\"0123456789abcdef\""
    static let lastModified = "Mon, 01 Jan 2024 01:00:00 GMT"

    static func notModified(_ ifNoneMatch: [String] = [], _ ifModifiedSince: [String] = []) -> Bool {
        ConditionalRequest.notModified(ifNoneMatch: ifNoneMatch, ifModifiedSince: ifModifiedSince, etag: etag, lastModified: lastModified)
    }

    @Test("If-None-Match", arguments: [
        ([etag], true), (["W/" + etag], true), (["*"], true), (["  *  "], true),
        (["\"other\", " + etag], true), (["\"other\"", "W/" + etag], true), (["\"a,b\", " + etag], true),
        (["\"other\""], false), ([String(etag.dropLast())], false), (["0123456789abcdef"], false), (["garbage " + etag], false),
    ])
    func ifNoneMatch(fields: [String], notModified: Bool) {
        #expect(Self.notModified(fields) == notModified)
    }

    @Test("If-Modified-Since, in the three date forms, at or after Last-Modified", arguments: [
        ("Mon, 01 Jan 2024 01:00:00 GMT", true), ("Mon, 01 Jan 2024 00:59:59 GMT", false), ("Tue, 02 Jan 2024 00:00:00 GMT", true),
        ("Monday, 01-Jan-24 01:00:00 GMT", true), ("Mon Jan  1 01:00:00 2024", true), ("Mon Jan  1 00:00:00 2024", false),
        ("yesterday", false), ("Mon, 32 Jan 2024 01:00:00 GMT", false), ("Mon, 01 Jan 2024 01:00:00 UTC", false), ("", false),
    ])
    func ifModifiedSince(date: String, notModified: Bool) {
        #expect(Self.notModified([], [date]) == notModified)
    }

    @Test("If-None-Match wins over If-Modified-Since; two dates are ignored")
    func precedence() {
        #expect(Self.notModified([Self.etag], ["Thu, 01 Jan 1970 00:00:00 GMT"]))
        #expect(!Self.notModified(["\"other\""], [Self.lastModified]))
        #expect(!Self.notModified([], [Self.lastModified, Self.lastModified]))
    }

    @Test("HTTP-dates read back what the server writes")
    func datesRoundTrip() {
        for seconds: Int64 in [0, 784_111_777, HTTPDate.epochOfGenerationZero, 4_102_444_800] {
            #expect(HTTPDate.parse(HTTPDate.format(secondsSince1970: seconds)) == seconds)
        }
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == 784_111_777)
    }
}

/// The lab server over a real socket: 304 for a current copy, the file for a changed one, and the
/// two faults that make a server less helpful.
@Suite("304 Not Modified")
struct NotModifiedTests {
    static let fixture = Fixture(name: "current", size: 1000)

    @Test("a current copy gets 304 with the validators and no body, a GET and a HEAD alike, whatever the Range")
    func currentCopy() throws {
        try withLabServer { server in
            let path = fixturePath(Self.fixture)
            let first = try fetch(server, "GET", path)
            let etag = try #require(first.header("ETag"))
            for (method, headers) in [("GET", [("If-None-Match", etag)]), ("HEAD", [("If-None-Match", etag)]),
                                      ("GET", [("If-None-Match", etag), ("Range", "bytes=10-")]),
                                      ("GET", [("If-Modified-Since", try #require(first.header("Last-Modified")))])] {
                let again = try fetch(server, method, path, headers: headers)
                #expect(again.status == 304, "\(method) \(headers)")
                #expect(again.header("ETag") == etag && again.header("Last-Modified") == first.header("Last-Modified"))
                #expect(again.body.isEmpty && again.header("Content-Length") == nil && again.header("Transfer-Encoding") == nil)
            }
        }
    }

    @Test("a changed file is sent whole, with its new validator")
    func changedFile() throws {
        try withLabServer { server in
            let path = fixturePath(Self.fixture, faults: "ok,change")
            let first = try fetch(server, "GET", path)
            let etag = try #require(first.header("ETag"))
            let changed = try fetch(server, "GET", path, headers: [("If-None-Match", etag)])
            #expect(changed.status == 200)
            #expect(changed.header("ETag") != etag)
            #expect(changed.body == expectedBytes(Fixture(name: "current", size: 1000, generation: 1)))
        }
    }

    @Test("same-date: a file changed within its second keeps its date, so only If-None-Match sees the change")
    func sameDate() throws {
        try withLabServer { server in
            let path = fixturePath(Self.fixture, faults: "ok,change+same-date,same-date*2")
            let first = try fetch(server, "GET", path)
            let (etag, date) = (try #require(first.header("ETag")), try #require(first.header("Last-Modified")))
            let byDate = try fetch(server, "GET", path, headers: [("If-Modified-Since", date)])
            #expect(byDate.status == 304 && byDate.header("Last-Modified") == date && byDate.header("ETag") != etag)
            let byTag = try fetch(server, "GET", path, headers: [("If-None-Match", etag), ("If-Modified-Since", date)])
            #expect(byTag.status == 200 && byTag.header("Last-Modified") == date)
            #expect(byTag.body == expectedBytes(Fixture(name: "current", size: 1000, generation: 1)))
            // An If-Range by the date still matches, and brings bytes of the new file.
            let ranged = try fetch(server, "GET", path, headers: [("Range", "bytes=10-19"), ("If-Range", date)])
            #expect(ranged.status == 206 && ranged.body == expectedBytes(Fixture(name: "current", size: 1000, generation: 1), from: 10, count: 10))
        }
    }

    @Test("ignore-conditionals sends the whole file again; cache-control goes on the 200 and the 304")
    func faults() throws {
        try withLabServer { server in
            let ignoring = fixturePath(Self.fixture, faults: "ok,ignore-conditionals")
            let etag = try #require(try fetch(server, "GET", ignoring).header("ETag"))
            let again = try fetch(server, "GET", ignoring, headers: [("If-None-Match", etag)])
            #expect(again.status == 200 && again.body == expectedBytes(Self.fixture))

            let cached = fixturePath(Self.fixture, faults: "cache-control:max-age=3600*2")
            let first = try fetch(server, "GET", cached)
            #expect(first.header("Cache-Control") == "max-age=3600")
            let notModified = try fetch(server, "GET", cached, headers: [("If-None-Match", etag)])
            #expect(notModified.status == 304 && notModified.header("Cache-Control") == "max-age=3600")
        }
    }

    @Test("a compressed answer's weak tag matches, and the 304 says Vary")
    func compressed() throws {
        try withLabServer { server in
            let path = fixturePath(Self.fixture, faults: "gzip*2")
            let first = try fetch(server, "GET", path, headers: [("Accept-Encoding", "gzip")])
            let etag = try #require(first.header("ETag"))
            #expect(etag.hasPrefix("W/"))
            let again = try fetch(server, "GET", path, headers: [("Accept-Encoding", "gzip"), ("If-None-Match", etag)])
            #expect(again.status == 304 && again.header("ETag") == etag && again.header("Vary") == "Accept-Encoding")
        }
    }
}
