import Foundation
@testable import LabServer
import LabVocabulary
import TestServers
import Testing

/// Fault scripts and queries with values at and past every edge: the server answers each one
/// (with 400 when it cannot honour it) and stays up.
@Suite("The server under extreme fault scripts")
struct ExtremeFaultTests {
    @Test("a lying length near Int64.max is refused with 400, and the server stays up")
    func hugeBadLengthIsRefused() throws {
        try withLabServer { server in
            for delta in ["%2B9223372036854775807", "-9223372036854775807", "%2B64GiB1", "%2B8EiB"] {
                let response = try fetch(server, "GET", "/fixtures/c?size=1KiB&faults=bad-length:\(delta)", timeout: 5)
                #expect(response.status == 400, "\(delta): \(response)")
                #expect(response.bodyText.contains("at most 64GiB") || response.bodyText.contains("bad fault"), "\(response.bodyText)")
            }
            // The largest lie that can be told is told, and the connection closes after the true body.
            let largest = try fetch(server, "GET", "/fixtures/c?size=1KiB&faults=bad-length:%2B64GiB", timeout: 5)
            #expect(largest.status == 200)
            #expect(largest.header("Content-Length") == String(1024 + (Int64(64) << 30)))
            #expect(largest.body.count == 1024)
            #expect(try fetch(server, "GET", "/fixtures/c?size=10").status == 200)
        }
    }

    @Test("randomized fault scripts with extreme values: every request is answered, the server stays up")
    func randomizedExtremeScripts() throws {
        try withLabServer { server in
            var generator = SeededGenerator(seed: UInt64(Date().timeIntervalSince1970))
            let seed = generator.state
            var statuses: [Int: Int] = [:]
            for index in 0..<400 {
                let target = Self.randomTarget(index: index, using: &generator)
                let connection = try RawHTTPConnection(port: server.port, receiveTimeout: 5)
                var headers: [(String, String)] = []
                if Bool.random(using: &generator) {
                    headers.append(("Range", "bytes=\(Self.extremeNumber(using: &generator))-\(Bool.random(using: &generator) ? "" : Self.extremeNumber(using: &generator))"))
                }
                try connection.sendRequest("GET", target, headers: headers)
                // The head is enough: a 64 GiB body is not read, the connection just closes.
                let response: RawResponse
                do {
                    response = try connection.readResponse(isHead: true)
                } catch {
                    Issue.record("seed \(seed): \(target) \(headers): \(error)")
                    continue
                }
                #expect((200...599).contains(response.status), "seed \(seed): \(target) \(headers): \(response)")
                statuses[response.status, default: 0] += 1
            }
            // Still up, and still right.
            let after = try fetch(server, "GET", "/fixtures/after?size=1KiB")
            #expect(after.status == 200 && after.body.count == 1024, "seed \(seed)")
            // Both kinds of answer were exercised, not only refusals.
            #expect(statuses[400, default: 0] > 20 && statuses.filter { $0.key != 400 }.values.reduce(0, +) > 20, "seed \(seed): \(statuses)")
        }
    }

    /// Values at and past every edge, and ordinary ones, so that refused and honoured scripts both run.
    /// A script the lab renders for a URL reads back as the same script, whatever it holds.
    @Test func everyScriptThatParsesRendersBackToItself() throws {
        var generator = SeededGenerator(seed: UInt64.random(in: .min ... .max))
        var parsed = 0
        for index in 0..<4_000 {
            let target = Self.randomTarget(index: index, using: &generator)
            let query = target.split(separator: "faults=")[1].split(separator: "&")[0].replacingOccurrences(of: "%2B", with: "+")
            guard let script = try? FaultScript(parsing: query) else { continue }
            parsed += 1
            #expect(try FaultScript(parsing: script.description) == script, "\(query) → \(script)")
        }
        #expect(parsed > 500)
        #expect(FaultScript.none.description.isEmpty)
        #expect(try FaultScript(parsing: "drop:40pct,ok,stall:1048576:2s+throttle:1000").description
                == "drop:40pct,ok,stall:1MiB:2000ms+throttle:1000")
    }

    static let extremes = ["0", "-1", "101", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                           "18446744073709551616", "64GiB", "65GiB", "8EiB", "99999999999TiB", ""]
    static let ordinary = ["1", "10", "100", "1000", "1KiB", "64KiB", "1MiB", "3"]

    static func extremeNumber(using generator: inout SeededGenerator) -> String {
        ["0", "1", "9223372036854775807", "9223372036854775806", "99999999999999999999", "68719476735", "68719476736"]
            .randomElement(using: &generator)!
    }

    static func randomTarget(index: Int, using generator: inout SeededGenerator) -> String {
        func value() -> String {
            (Int.random(in: 0..<10, using: &generator) < 3 ? extremes : ordinary).randomElement(using: &generator)!
        }
        func signed() -> String { ["%2B", "-", ""].randomElement(using: &generator)! + value() }
        func offset() -> String { Bool.random(using: &generator) ? value() : value() + "pct" }
        let faults = (0..<Int.random(in: 1...3, using: &generator)).map { _ in
            [
                "drop:\(offset())", "throttle:\(value())", "stall:\(offset())", "stall:\(offset()):\(value())s",
                "stall:\(offset()):\(value())ms", "status:\(value())", "redirect:\(value())", "bad-length:\(signed())",
                "shift-range:\(signed())", "ignore-range", "change", "ok", "status:404", "redirect:2", "drop:50pct",
            ].randomElement(using: &generator)!
        }.joined(separator: Bool.random(using: &generator) ? "%2B" : ",")
        let size = (Bool.random(using: &generator) ? ["0", "1", "1KiB", "64GiB", "68719476737", "9223372036854775807"] : ordinary)
            .randomElement(using: &generator)!
        var query = "size=\(size)&faults=\(faults)&run=r\(index)"
        if Int.random(in: 0..<4, using: &generator) == 0 { query += "&attempt=\(value())" }
        if Int.random(in: 0..<4, using: &generator) == 0 { query += "&hops=\(value())" }
        return "/fixtures/extreme\(index % 7)?\(query)"
    }
}

/// SplitMix64: a reproducible sequence, so a failure's seed repeats it.
struct SeededGenerator: RandomNumberGenerator {
    private(set) var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}

@Suite("The request log and the attempt counters stay bounded")
struct BoundedMemoryTests {
    @Test func theLogKeepsTheNewestEntriesAndTheEndsOfLongTargets() {
        var log = BoundedRequestLog()
        let long = "/fixtures/x?pad=" + String(repeating: "p", count: 60_000) + "&run=token-42"
        var numbers: [Int] = []
        for index in 0..<(BoundedRequestLog.maximumEntries + 500) {
            numbers.append(log.append(LoggedRequest(method: .get, target: index.isMultiple(of: 2) ? long : "/short\(index)",
                                                    range: String(repeating: "r", count: 16_000), ifRange: nil,
                                                    status: 200, bodyBytesSent: 0, attempt: 1)))
        }
        #expect(log.all.count <= BoundedRequestLog.maximumEntries)
        #expect(log.all.reduce(0) { $0 + $1.textBytes } <= BoundedRequestLog.maximumBytes)
        // The run token at the end of a target survives the cut; the newest entry is last.
        #expect(log.all.contains { $0.target.hasSuffix("run=token-42") && $0.target.utf8.count <= 2100 })
        #expect(log.all.last?.target == "/short\(BoundedRequestLog.maximumEntries + 499)")
        #expect(log.all.allSatisfy { ($0.range?.utf8.count ?? 0) <= LoggedRequest.maximumHeaderBytes + 3 })
        // Body bytes reach the entry they were meant for, and not a dropped one's neighbour.
        log.setBodyBytes(7, ofEntry: numbers.last!, at: 0)
        log.setBodyBytes(9, ofEntry: numbers.first!, at: 0)
        #expect(log.all.last?.bodyBytesSent == 7)
        #expect(!log.all.contains { $0.bodyBytesSent == 9 })
    }

    @Test func attemptCountersForgetTheOldestURLs() {
        var counters = AttemptCounters()
        #expect(counters.next(for: "/a", advancing: true) == 1)
        #expect(counters.next(for: "/a", advancing: false) == 2)
        #expect(counters.next(for: "/a", advancing: true) == 2)
        for index in 0..<AttemptCounters.maximumURLs { _ = counters.next(for: "/u\(index)", advancing: true) }
        // "/a" was the oldest: it starts again from attempt 1; the newest are remembered.
        #expect(counters.next(for: "/a", advancing: false) == 1)
        #expect(counters.next(for: "/u\(AttemptCounters.maximumURLs - 1)", advancing: false) == 2)
    }
}
