import Foundation
import TestFolders
import LabFixtures
import LabServer
import LabVocabulary
import Synchronization
import TestServers
import TestThreads
import Testing

@Suite("Scripted faults")
struct FaultTests {
    let fixture = Fixture(name: "faulty", size: 1 << 20)

    @Test("drop closes after exactly N bytes or N percent", arguments: [
        ("drop:1000", nil as String?, 1000, 0 as Int64),
        ("drop:40pct", nil, 419_430, 0),
        ("drop:0", nil, 0, 0),
        ("drop:64KiB", nil, 65_536, 0),
        ("drop:50pct", "bytes=1000-", 523_788, 1000),
        ("drop:5000", "bytes=-100", 100, 1_048_476),
    ])
    func drop(faults: String, range: String?, received: Int, first: Int64) throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", fixturePath(fixture, faults: faults), headers: range.map { [("Range", $0)] } ?? [])
            #expect(response.status == (range == nil ? 200 : 206))
            #expect(byteDifference(response.body, expectedBytes(fixture, from: first, count: received)) == nil)
            // 100 bytes requested and drop at 5000: the whole short body arrives, then the close.
            #expect(response.closedEarly == (faults != "drop:5000"))
            #expect(server.requestLog.last?.bodyBytesSent == Int64(received))
        }
    }

    @Test("drop on the first attempt only; the second behaves")
    func dropThenOk() throws {
        try withLabServer { server in
            let path = fixturePath(fixture, faults: "drop:40pct,ok")
            let first = try fetch(server, "GET", path)
            let second = try fetch(server, "GET", path)
            #expect(first.body.count == 419_430 && first.closedEarly)
            #expect(byteDifference(second.body, expectedBytes(fixture)) == nil && !second.closedEarly)
            #expect(server.requestLog.map(\.attempt) == [1, 2])
        }
    }

    @Test("throttle paces the body")
    func throttle() throws {
        try withLabServer { server in
            let small = Fixture(name: "slow", size: 256 << 10)
            let (response, seconds) = try measure { try fetch(server, "GET", fixturePath(small, faults: "throttle:128KiB")) }
            #expect(byteDifference(response.body, expectedBytes(small)) == nil)
            // 256 KiB at 128 KiB/s is 2 s; the margins only catch "not throttled" and "stuck".
            #expect(seconds >= 1.5)
            #expect(seconds < 8)
        }
    }

    @Test("throttle combines with drop")
    func throttleAndDrop() throws {
        try withLabServer { server in
            let (response, seconds) = try measure {
                try fetch(server, "GET", fixturePath(fixture, faults: "throttle:1MiB+drop:256KiB"))
            }
            #expect(byteDifference(response.body, expectedBytes(fixture, count: 256 << 10)) == nil)
            #expect(response.closedEarly)
            #expect(seconds >= 0.15 && seconds < 5)
        }
    }

    @Test("stall with a duration pauses, then completes")
    func stallWithDuration() throws {
        try withLabServer { server in
            let (response, seconds) = try measure { try fetch(server, "GET", fixturePath(fixture, faults: "stall:40pct:1s")) }
            #expect(byteDifference(response.body, expectedBytes(fixture)) == nil)
            #expect(!response.closedEarly)
            #expect(seconds >= 0.9)
            #expect(seconds < 6)
        }
    }

    @Test("stall without a duration holds the connection open")
    func stallForever() throws {
        try withLabServer { server in
            let (response, seconds) = try measure {
                try fetch(server, "GET", fixturePath(fixture, faults: "stall:100000"), timeout: 0.5)
            }
            #expect(response.status == 200)
            #expect(response.timedOut)
            #expect(!response.closedEarly)
            #expect(byteDifference(response.body, expectedBytes(fixture, count: 100_000)) == nil)
            #expect(seconds >= 0.45)
        }
    }

    @Test("ignore-range answers 200 with the full body")
    func ignoreRange() throws {
        try withLabServer { server in
            let path = fixturePath(fixture, faults: "ok,ignore-range")
            let first = try fetch(server, "GET", path, headers: [("Range", "bytes=100-")])
            let second = try fetch(server, "GET", path, headers: [("Range", "bytes=100-")])
            #expect(first.status == 206)
            #expect(second.status == 200)
            #expect(second.header("Content-Range") == nil)
            #expect(byteDifference(second.body, expectedBytes(fixture)) == nil)
        }
    }

    @Test("change gives new bytes, ETag, Last-Modified and digest from that attempt on")
    func change() throws {
        try withLabServer { server in
            let path = fixturePath(fixture, faults: "drop:30pct,change")
            let changed = Fixture(name: fixture.name, size: fixture.size, generation: 1)

            let first = try fetch(server, "GET", path)
            #expect(first.header("ETag") == fixture.etag)
            #expect(byteDifference(first.body, expectedBytes(fixture, count: 314_572)) == nil)

            // The resume attempt: If-Range carries the old ETag, so the server must send it all.
            let second = try fetch(server, "GET", path, headers: [("Range", "bytes=314572-"), ("If-Range", fixture.etag)])
            #expect(second.status == 200)
            #expect(second.header("ETag") == changed.etag)
            #expect(second.header("ETag") != fixture.etag)
            #expect(second.header("Last-Modified") == "Mon, 01 Jan 2024 01:00:00 GMT")
            #expect(byteDifference(second.body, expectedBytes(changed)) == nil)
            #expect(byteDifference(second.body, expectedBytes(fixture)) != nil)
            #expect(second.header("Repr-Digest") == expectedReprDigest(changed))

            // Changes persist past the end of the script.
            let third = try fetch(server, "GET", path, headers: [("Range", "bytes=0-9"), ("If-Range", changed.etag)])
            #expect(third.status == 206)
            #expect(byteDifference(third.body, expectedBytes(changed, count: 10)) == nil)
        }
    }

    @Test("status answers a short text without fixture headers", arguments: [404, 500, 503])
    func status(code: Int) throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", fixturePath(fixture, faults: "status:\(code)"))
            #expect(response.status == code)
            #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
            #expect(response.header("ETag") == nil)
            #expect(response.header("Repr-Digest") == nil)
            #expect(response.header("Accept-Ranges") == nil)
            #expect(isOneLine(response.bodyText))
            #expect(response.header("Content-Length") == "\(response.body.count)")
        }
    }

    @Test("redirect:3 is a chain of three 302s pinned to the same attempt")
    func redirectChain() throws {
        try withLabServer { server in
            let small = Fixture(name: "moved", size: 1000)
            let start = fixturePath(small, faults: "redirect:3,ok", run: "r1")
            var target = start
            var locations: [String] = []
            for _ in 0..<3 {
                let response = try fetch(server, "GET", target)
                #expect(response.statusLine == "HTTP/1.1 302 Found")
                let location = try #require(response.header("Location"))
                locations.append(location)
                target = location
            }
            #expect(locations == [
                "/fixtures/moved?size=1000&faults=redirect:3,ok&run=r1&attempt=1&hops=2",
                "/fixtures/moved?size=1000&faults=redirect:3,ok&run=r1&attempt=1&hops=1",
                "/fixtures/moved?size=1000&faults=redirect:3,ok&run=r1&attempt=1&hops=0",
            ])
            let final = try fetch(server, "GET", target)
            #expect(final.status == 200)
            #expect(byteDifference(final.body, expectedBytes(small)) == nil)
            #expect(server.requestLog.map(\.attempt) == [1, 1, 1, 1])

            // The chain used up one attempt only: the next plain GET is attempt 2, served directly.
            let next = try fetch(server, "GET", start)
            #expect(next.status == 200)
            #expect(server.requestLog.last?.attempt == 2)
        }
    }

    @Test("the last hop of a redirect chain plays the attempt's other faults")
    func redirectThenOtherFaults() throws {
        try withLabServer { server in
            let small = Fixture(name: "hop", size: 1000)
            let first = try fetch(server, "GET", fixturePath(small, faults: "redirect:1+drop:100"))
            #expect(first.status == 302)
            let location = try #require(first.header("Location"))
            #expect(location == "/fixtures/hop?size=1000&faults=redirect:1+drop:100&attempt=1&hops=0")
            let second = try fetch(server, "GET", location)
            #expect(second.status == 200)
            #expect(second.closedEarly)
            #expect(byteDifference(second.body, expectedBytes(small, count: 100)) == nil)
        }
    }

    @Test("a percent-encoded plus is a plus, and a literal plus is not a space")
    func plusInQuery() throws {
        try withLabServer { server in
            let encoded = try fetch(server, "GET", fixturePath(fixture, faults: "status:500%2Bchange"))
            #expect(encoded.status == 500)
            // Both spellings decode to the same script, so they share one attempt counter.
            let literal = try fetch(server, "GET", fixturePath(fixture, faults: "status:500+change"))
            #expect(literal.status == 200)
            #expect(server.requestLog.map(\.attempt) == [1, 2])
        }
    }

    @Test("bad-length declares a wrong Content-Length, sends the true body, then closes", arguments: [
        ("bad-length:+10", "1010"), ("bad-length:-10", "990"), ("bad-length:-5000", "0"),
    ])
    func badLength(faults: String, declared: String) throws {
        try withLabServer { server in
            let small = Fixture(name: "liar", size: 1000)
            let response = try fetch(server, "GET", fixturePath(small, faults: faults), untilClose: true)
            #expect(response.status == 200)
            #expect(response.header("Content-Length") == declared)
            #expect(byteDifference(response.body, expectedBytes(small)) == nil)
            #expect(!response.timedOut, "the server must close the connection")
        }
    }

    @Test("a client reading a +n bad length sees the connection close early")
    func badLengthTooLong() throws {
        try withLabServer { server in
            let small = Fixture(name: "liar", size: 1000)
            let response = try fetch(server, "GET", fixturePath(small, faults: "bad-length:+1"))
            #expect(response.closedEarly)
            #expect(response.body.count == 1000)
        }
    }

    @Test("a bad fault script is a 400 with one line naming the token")
    func badScript() throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", fixturePath(fixture, faults: "ok,drop:abc"))
            #expect(response.status == 400)
            #expect(response.bodyText == "bad fault \"drop:abc\": expected bytes or Npct\n")
            #expect(server.requestLog.last?.attempt == 0, "a rejected request plays no attempt")
        }
    }

    /// `%FF` is no UTF-8: the item is refused, where URLComponents would have dropped its value
    /// and served the file with no fault at all.
    @Test("a query item whose %XX are not UTF-8 is a 400, not an item left out",
          arguments: ["faults=disposition:%FF", "faults=disposition:a%FFb", "size=%C3", "faults=ok&%FF=1"])
    func queryThatIsNotUTF8(query: String) throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", "/fixtures/\(fixture.name)?\(query)")
            #expect(response.status == 400, "\(query): \(response.statusLine)")
            #expect(response.bodyText.hasSuffix("\": its %XX must spell UTF-8\n"), "\(response.bodyText)")
            #expect(response.header("Content-Disposition") == nil)
        }
    }

    @Test("chunked sends the body with no Content-Length, and a drop leaves out the last chunk")
    func chunked() throws {
        try withLabServer { server in
            let whole = try fetch(server, "GET", fixturePath(fixture, faults: "chunked"), headers: [("Connection", "close")], untilClose: true)
            #expect(whole.status == 200)
            #expect(whole.header("Transfer-Encoding") == "chunked")
            #expect(whole.header("Content-Length") == nil)
            let decoded = try #require(decodeChunks(whole.body))
            #expect(decoded.complete)
            #expect(byteDifference(decoded.body, expectedBytes(fixture)) == nil)

            let dropped = try fetch(server, "GET", fixturePath(fixture, faults: "chunked+drop:40pct"), untilClose: true)
            let partial = try #require(decodeChunks(dropped.body))
            #expect(!partial.complete, "no terminating zero-length chunk after a drop")
            #expect(byteDifference(partial.body, expectedBytes(fixture, count: 419_430)) == nil)
        }
    }

    @Test("disposition names the file in both forms, the hostile name as it is", arguments: [
        ("..%2F..%2Fetc%2Fpasswd", #"attachment; filename="../../etc/passwd"; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd"#),
        ("r%C3%A9sum%C3%A9.pdf", #"attachment; filename="r_sum_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"#),
        ("%01%22q%22%5C.txt", #"attachment; filename="_\"q\"\\.txt"; filename*=UTF-8''%01%22q%22%5C.txt"#),
        ("..%5Cx", #"attachment; filename="..\\x"; filename*=UTF-8''..%5Cx"#),
    ])
    func disposition(name: String, header: String) throws {
        try withLabServer { server in
            let small = Fixture(name: "named", size: 1000)
            let response = try fetch(server, "GET", fixturePath(small, faults: "disposition:\(name)"))
            #expect(response.status == 200)
            #expect(response.header("Content-Disposition") == header)
            #expect(byteDifference(response.body, expectedBytes(small)) == nil)
        }
    }

    @Test("a 10,000-character name goes out whole")
    func longDisposition() throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", fixturePath(Fixture(name: "named", size: 10), faults: "disposition:" + String(repeating: "a", count: 10_000)))
            #expect(response.header("Content-Disposition") == "attachment; filename=\"\(String(repeating: "a", count: 10_000))\"; filename*=UTF-8''\(String(repeating: "a", count: 10_000))")
        }
    }

    @Test("latency delays the head, and each write of the body after the first")
    func latency() throws {
        try withLabServer { server in
            let (head, headSeconds) = try measure { try fetch(server, "HEAD", fixturePath(fixture, faults: "latency:300ms")) }
            #expect(head.status == 200)
            #expect(headSeconds >= 0.3)
            // 1 MiB goes out in four 256 KiB writes: the head's wait and three more.
            let (response, seconds) = try measure { try fetch(server, "GET", fixturePath(fixture, faults: "latency:300ms")) }
            #expect(byteDifference(response.body, expectedBytes(fixture)) == nil)
            #expect(seconds >= 1.2)
            #expect(seconds < 8)
        }
    }
}

@Suite("Network profiles")
struct ProfileTests {
    /// 1 MiB over 3g: the head no sooner than the latency, the body at the profile's rate.
    @Test func threeGGivesItsLatencyAndBandwidth() async throws {
        // 11 s of waiting for a paced body, on a thread of its own.
        try await OffThePool.run {
            try withLabServer { server in
                let fixture = Fixture(name: "mobile", size: 1 << 20)
                let network = NetworkProfile.threeG
                let latency = Double(network.latencyMilliseconds) / 1000
                // Time to the head: at least the latency.
                let (head, headSeconds) = try measure { try fetch(server, "HEAD", fixturePath(fixture, faults: "profile:3g")) }
                #expect(head.status == 200)
                #expect(headSeconds >= latency)
                // The body's rate, the latency left out: within 15% of the profile's bandwidth.
                let (response, seconds) = try measure { try fetch(server, "GET", fixturePath(fixture, faults: "profile:3g"), timeout: 60) }
                #expect(byteDifference(response.body, expectedBytes(fixture)) == nil)
                let rate = Double(fixture.size) / (seconds - latency)
                #expect(abs(rate / Double(network.bytesPerSecond) - 1) < 0.15, "\(rate) bytes/s against \(network.bytesPerSecond)")
            }
        }
    }

    /// The loss model's rates over many attempts, and the same attempt playing the same way.
    @Test func lossShowsAsPausesAndRareResetsAtTheDocumentedRates() {
        let attempts = 20_000
        var pauses = 0, resets = 0
        var latencies: [Duration] = []
        for seed in 0..<UInt64(attempts) {
            let link = LossyLink(.threeG, seed: seed &* 0x9E37_79B9)
            pauses += link.pauses(bodyLength: 1 << 20).count
            if link.reset(bodyLength: 1 << 20) != nil { resets += 1 }
            latencies.append(link.latencyWithJitter)
        }
        #expect(latencies.min()! >= .milliseconds(250) && latencies.max()! <= .milliseconds(300))
        // 15 stretches of 64 KiB after the first, each pausing with a 3% chance: 0.45 per MiB.
        #expect((0.40...0.50).contains(Double(pauses) / Double(attempts)))
        // A reset with a 0.375% chance per MiB.
        #expect((0.0025...0.005).contains(Double(resets) / Double(attempts)))
        let link = LossyLink(.dsl, seed: 42)
        #expect(link.pauses(bodyLength: 64 << 20).map(\.at) == LossyLink(.dsl, seed: 42).pauses(bodyLength: 64 << 20).map(\.at))
        #expect(LossyLink(.lte, seed: 7).pauses(bodyLength: 64 << 20).isEmpty, "lte has no loss")
    }
}

/// A chunked body's chunks joined, and whether the terminating zero-length chunk came; nil when
/// the framing is broken.
private func decodeChunks(_ raw: [UInt8]) -> (body: [UInt8], complete: Bool)? {
    var body: [UInt8] = [], index = 0
    while true {
        guard let lineEnd = (index..<max(index, raw.count - 1)).first(where: { raw[$0] == 13 && raw[$0 + 1] == 10 }) else {
            return (body, false)
        }
        guard let size = Int(String(decoding: raw[index..<lineEnd], as: UTF8.self), radix: 16) else { return nil }
        index = lineEnd + 2
        if size == 0 { return (body, true) }
        guard index + size <= raw.count else { return (body + raw[index...], false) }
        body += raw[index..<(index + size)]
        index += size + 2
    }
}
