import LabServer
import LabVocabulary
import Testing

@Suite("ByteSize and FaultScript parsing")
struct ParsingTests {
    @Test("byte sizes", arguments: [
        ("0", Int64(0)), ("1000", 1000), ("64KiB", 65_536), ("64MiB", 67_108_864), ("1GiB", 1_073_741_824),
        ("64gib", 68_719_476_736), ("5KB", 5_000), ("5MB", 5_000_000), ("2GB", 2_000_000_000), ("7B", 7),
    ])
    func byteSizes(text: String, bytes: Int64) throws {
        #expect(try ByteSize.parse(text) == bytes)
    }

    @Test("bad byte sizes give a one-line error", arguments: ["", "abc", "-1", "1.5MiB", "12XB", "99999999999TiB", " 1"])
    func badByteSizes(text: String) {
        #expect {
            try ByteSize.parse(text)
        } throws: { error in
            guard let error = error as? LabError else { return false }
            return error.message.hasPrefix("bad size \"\(text)\"") && !error.message.contains("\n")
        }
    }

    @Test("ByteSize.format round-trips")
    func formatting() throws {
        for bytes: Int64 in [0, 1000, 1024, 65_536, 3 << 20, 1 << 30, 1_000_000] {
            #expect(try ByteSize.parse(ByteSize.format(bytes)) == bytes)
        }
        #expect(ByteSize.format(64 << 20) == "64MiB")
    }

    @Test("fault scripts parse into attempts")
    func faultScripts() throws {
        let script = try FaultScript.parse("throttle:4MiB+drop:1MiB,ok,stall:40pct:2s+change,redirect:3,status:503,bad-length:-10,ignore-range,stall:100,shift-range:+100+drop:1,shift-range:-1KiB")
        #expect(script.attempts == [
            [.throttle(bytesPerSecond: 4 << 20), .drop(after: .bytes(1 << 20))],
            [],
            [.stall(after: .percent(40), duration: .seconds(2)), .change],
            [.redirect(hops: 3)],
            [.status(code: 503)],
            [.badLength(delta: -10)],
            [.ignoreRange],
            [.stall(after: .bytes(100), duration: nil)],
            [.shiftRange(offset: 100), .drop(after: .bytes(1))],
            [.shiftRange(offset: -1024)],
        ])
        #expect(script.faults(forAttempt: 99) == [])
        #expect(try FaultScript.parse("").attempts.isEmpty)
        #expect(try FaultScript.parse("stall:0:500ms").attempts == [[.stall(after: .bytes(0), duration: .milliseconds(500))]])
    }

    @Test("chunked, disposition and latency parse, and print back as they parse")
    func transportFaults() throws {
        let script = try FaultScript.parse("chunked+latency:300ms,disposition:..%2F..%2Fetc%2Fpasswd+drop:1,disposition:r%C3%A9sum%C3%A9%2C%20final.pdf")
        #expect(script.attempts == [
            [.chunked, .latency(.milliseconds(300))],
            [.disposition(filename: "../../etc/passwd"), .drop(after: .bytes(1))],
            [.disposition(filename: "résumé, final.pdf")],
        ])
        #expect(script.description == "chunked+latency:300ms,disposition:..%2F..%2Fetc%2Fpasswd+drop:1,disposition:r%C3%A9sum%C3%A9%2C%20final.pdf")
        #expect(try FaultScript.parse(script.description) == script)
        #expect(try FaultScript.parse("profile:3g+drop:50pct,profile:wifi").attempts == [[.profile(.threeG), .drop(after: .percent(50))], [.profile(.wifi)]])
        // gzip in any attempt makes the whole script's fixture text, so a resume continues the same bytes.
        #expect(try FaultScript.parse("drop:1,gzip").attempts == [[.drop(after: .bytes(1))], [.gzip]])
        #expect(try FaultScript.parse("drop:1,gzip").content == .text)
        #expect(try FaultScript.parse("chunked+drop:1").content == .binary)
        let long = String(repeating: "é", count: 5000)
        #expect(try FaultScript.parse(FaultScript(attempts: [[.disposition(filename: long)]]).description).attempts == [[.disposition(filename: long)]])
    }

    @Test("cache-control and ignore-conditionals parse, and print back as they parse")
    func cachingFaults() throws {
        let script = try FaultScript.parse("cache-control:max-age=3600,cache-control:no-cache%2C%20max-age=0+ignore-conditionals+change")
        #expect(script.attempts == [
            [.cacheControl("max-age=3600")],
            [.cacheControl("no-cache, max-age=0"), .ignoreConditionals, .change],
        ])
        #expect(script.description == "cache-control:max-age=3600,cache-control:no-cache%2C%20max-age=0+ignore-conditionals+change")
        #expect(try FaultScript.parse(script.description) == script)
    }

    @Test("generations count change tokens up to the attempt, and persist")
    func generations() throws {
        let script = try FaultScript.parse("drop:30pct,change,ok,change+drop:1")
        #expect((1...6).map(script.generation(forAttempt:)) == [0, 1, 1, 2, 2, 2])
    }

    @Test("bad fault scripts name the bad token in one line", arguments: [
        ("drop:abc", #"bad fault "drop:abc": expected bytes or Npct"#),
        ("ok,drop:101pct", #"bad fault "drop:101pct": expected bytes or Npct"#),
        ("explode", #"bad fault "explode": unknown fault (known: ok, drop, throttle, stall, ignore-range, change, status, redirect, bad-length, shift-range, chunked, disposition, latency, profile, gzip, cache-control, ignore-conditionals, connections, no-validators, same-date)"#),
        ("profile:5g", #"bad fault "profile:5g": unknown profile (known: edge, 3g, lte, dsl, wifi)"#),
        ("profile", #"bad fault "profile": expected profile:<name> (known: edge, 3g, lte, dsl, wifi)"#),
        ("profile:3g+throttle:1MiB", #"bad fault "throttle:1MiB": profile and throttle do not go together (a profile sets its own rate and latency)"#),
        ("latency:1s+profile:edge", #"bad fault "profile:edge": profile and latency do not go together (a profile sets its own rate and latency)"#),
        ("chunked:1", #"bad fault "chunked:1": chunked takes no value"#),
        ("gzip:9", #"bad fault "gzip:9": gzip takes no value"#),
        ("gzip+gzip", #"bad fault "gzip": only one gzip per attempt"#),
        ("chunked+bad-length:+1", #"bad fault "bad-length:+1": chunked and bad-length do not go together (a chunked body has no Content-Length)"#),
        ("disposition:", #"bad fault "disposition:": expected a file name of 1 to 16384 bytes, percent-encoded UTF-8 (%2F for /, %2C for ,)"#),
        ("disposition:%ZZ", #"bad fault "disposition:%ZZ": expected a file name of 1 to 16384 bytes, percent-encoded UTF-8 (%2F for /, %2C for ,)"#),
        ("disposition:%FF", #"bad fault "disposition:%FF": expected a file name of 1 to 16384 bytes, percent-encoded UTF-8 (%2F for /, %2C for ,)"#),
        ("disposition", #"bad fault "disposition": expected disposition:<file name, percent-encoded>"#),
        ("latency:abc", #"bad fault "latency:abc": expected a delay up to 10 s, like 300ms or 0.3s"#),
        ("latency:11s", #"bad fault "latency:11s": expected a delay up to 10 s, like 300ms or 0.3s"#),
        ("throttle:0", #"bad fault "throttle:0": expected a positive rate in bytes per second, like 2MiB"#),
        ("stall:10:2", #"bad fault "stall:10:2": expected a duration like 2s, 0.5s or 500ms"#),
        ("status:200", #"bad fault "status:200": expected an error status code from 400 to 599"#),
        ("redirect:0", #"bad fault "redirect:0": expected a number of hops from 1 to 20"#),
        ("bad-length:10", #"bad fault "bad-length:10": expected +<bytes> or -<bytes>, like +100 or -1KiB, at most 64GiB"#),
        ("bad-length:+64GiB1", #"bad fault "bad-length:+64GiB1": expected +<bytes> or -<bytes>, like +100 or -1KiB, at most 64GiB"#),
        ("bad-length:-9223372036854775807", #"bad fault "bad-length:-9223372036854775807": expected +<bytes> or -<bytes>, like +100 or -1KiB, at most 64GiB"#),
        ("shift-range:x", #"bad fault "shift-range:x": expected +n or -n"#),
        ("shift-range:100", #"bad fault "shift-range:100": expected +n or -n"#),
        ("shift-range:+0", #"bad fault "shift-range:+0": expected +n or -n"#),
        ("shift-range:-0", #"bad fault "shift-range:-0": expected +n or -n"#),
        ("shift-range:+", #"bad fault "shift-range:+": expected +n or -n"#),
        ("shift-range", #"bad fault "shift-range": expected shift-range:+n or shift-range:-n"#),
        ("drop:1+drop:2", #"bad fault "drop:2": only one drop per attempt"#),
        ("shift-range:+1+shift-range:-1", #"bad fault "shift-range:-1": only one shift-range per attempt"#),
        ("ok,,ok", #"bad fault script "ok,,ok": empty attempt (use ok for an attempt without faults)"#),
        ("ok:1", #"bad fault "ok:1": ok takes no value"#),
        ("cache-control:", #"bad fault "cache-control:": expected a value of 1 to 256 printable ASCII characters, percent-encoded (%2C for ,), like max-age=3600"#),
        ("cache-control:max-age=1%0D%0ASet-Cookie%3A%20a=b", #"bad fault "cache-control:max-age=1%0D%0ASet-Cookie%3A%20a=b": expected a value of 1 to 256 printable ASCII characters, percent-encoded (%2C for ,), like max-age=3600"#),
        ("cache-control", #"bad fault "cache-control": expected cache-control:<value, percent-encoded> (max-age=3600, no-store)"#),
        ("ignore-conditionals:1", #"bad fault "ignore-conditionals:1": ignore-conditionals takes no value"#),
        ("connections:0", #"bad fault "connections:0": expected the GETs allowed at once, from 1 to 64"#),
        ("connections:65", #"bad fault "connections:65": expected the GETs allowed at once, from 1 to 64"#),
        ("connections", #"bad fault "connections": expected connections:<GETs at once, 1 to 64>"#),
    ])
    func badFaultScripts(script: String, message: String) {
        #expect(throws: LabError(message)) {
            try FaultScript.parse(script)
        }
    }
}

/// `*N` after an attempt: a server that stays broken, attempt after attempt.
struct RepeatedAttemptTests {
    @Test func anAttemptRepeatsNTimes() throws {
        let script = try FaultScript.parse("ok,drop:64KiB*40,ok")
        #expect(script.attempts == [[]] + Array(repeating: [.drop(after: .bytes(64 << 10))], count: 40) + [[]])
        #expect(script.faults(forAttempt: 41) == [.drop(after: .bytes(64 << 10))] && script.faults(forAttempt: 42) == [])
        #expect(script.description == "ok,drop:64KiB*40,ok")
        #expect(try FaultScript.parse(script.description) == script)
        // Two alike stay as they are; three read as one with a count.
        #expect(try FaultScript.parse("gzip,gzip").description == "gzip,gzip")
        #expect(try FaultScript.parse("change,change,change").description == "change*3")
        #expect(try FaultScript.parse("change*3").generation(forAttempt: 3) == 3)
    }

    @Test(arguments: ["drop:1*0", "drop:1*1001", "drop:1*", "drop:1*x", "*3"])
    func aBadCountIsRefused(text: String) {
        #expect {
            try FaultScript.parse(text)
        } throws: { error in
            (error as? LabError).map { $0.message.hasPrefix("bad fault script \"\(text)\"") && !$0.message.contains("\n") } == true
        }
    }
}
