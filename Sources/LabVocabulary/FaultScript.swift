/// What should go wrong, attempt by attempt, e.g. `drop:40pct,ok` or `throttle:4MiB+drop:1MiB`.
///
/// Attempts are separated by `,`; faults within one attempt are joined by `+`; `*N` after an
/// attempt plays it N times in a row (`drop:64KiB*40,ok`: a server that stays broken for 40
/// tries). The N-th GET of a URL plays attempt N; attempts past the end of the script behave
/// like `ok`.
public struct FaultScript: Hashable, Sendable, CustomStringConvertible {
    /// A position in a response body: a byte count, or a percentage of the body being sent
    /// (so `drop:50pct` on a Range response cuts that partial body in half).
    public enum Offset: Hashable, Sendable, CustomStringConvertible {
        case bytes(Int64)
        case percent(Int)

        public var description: String {
            switch self {
            case .bytes(let bytes): ByteSize.format(bytes)
            case .percent(let percent): "\(percent)pct"
            }
        }

        package func resolved(bodyLength: Int64) -> Int64 {
            switch self {
            case .bytes(let bytes): min(bytes, bodyLength)
            case .percent(let percent): bodyLength * Int64(percent) / 100
            }
        }
    }

    /// A fault's name in a script; `ok` is an attempt without faults.
    public enum Name: String, CaseIterable, Sendable, LabName {
        case ok
        case drop
        case throttle
        case stall
        case ignoreRange = "ignore-range"
        case change
        case status
        case redirect
        case badLength = "bad-length"
        case shiftRange = "shift-range"
        case chunked
        case disposition
        case latency
        case profile
        case gzip
        case cacheControl = "cache-control"
        case ignoreConditionals = "ignore-conditionals"
        case connections
        case noValidators = "no-validators"
        case sameDate = "same-date"
    }

    public enum Fault: Hashable, Sendable, CustomStringConvertible {
        /// Send this much body, then close the connection.
        case drop(after: Offset)
        /// Pace the body to this many bytes per second.
        case throttle(bytesPerSecond: Int64)
        /// Stop sending at `after`; resume after `duration`, or never when it is nil.
        case stall(after: Offset, duration: Duration?)
        /// Answer 200 with the full body even to a valid Range request.
        case ignoreRange
        /// From this attempt on the fixture has new content (a new generation).
        case change
        /// Answer this status with a short text body instead of the fixture.
        case status(code: Int)
        /// Answer with a chain of this many 302 redirects before serving.
        case redirect(hops: Int)
        /// Declare a Content-Length off by `delta`, send the true body, then close.
        case badLength(delta: Int64)
        /// Answer a 206 with a range starting `offset` bytes off the one asked for, truthfully
        /// labelled, as a buggy cache or proxy might.
        case shiftRange(offset: Int64)
        /// Send the body in chunked transfer coding, with no Content-Length: its length is unknown
        /// until it ends.
        case chunked
        /// Name the file in `Content-Disposition: attachment`, in both `filename=` and
        /// `filename*=UTF-8''…` (RFC 6266, RFC 8187); the name may be anything, hostile included.
        case disposition(filename: String)
        /// Wait this long before the response's head, and again before each write of its body.
        case latency(Duration)
        /// The whole attempt over a named network: its bandwidth, its latency (with jitter) before
        /// the head, and its loss as the pauses and, rarely, the resets a lossy link causes.
        case profile(NetworkProfile)
        /// Send the body with `Content-Encoding: gzip` to a client whose `Accept-Encoding` allows it,
        /// as nginx's gzip filter does: the compressed length, no ranges, a weak ETag.
        case gzip
        /// Send `Cache-Control` with this value (`max-age=3600`, `no-store`) on the file's answers,
        /// a 304 included.
        case cacheControl(String)
        /// Answer 200 with the whole file even to a conditional GET whose copy is current
        /// (`If-None-Match`, `If-Modified-Since`), as a server that never answers 304 does.
        case ignoreConditionals
        /// Allow this many of the URL's GETs at once (the others of its run still sending); a GET
        /// beyond them is answered 503 with `Retry-After: 1`, as a server's limit on connections
        /// per client answers (nginx's `limit_conn`). Each GET is paced on its own by `throttle`,
        /// so `throttle:2MiB+connections:4*100` is a CDN that paces each connection and allows four.
        case connections(limit: Int)
        /// Send neither `ETag` nor `Last-Modified`, as a static file server configured without
        /// entity tags does, or a dynamic endpoint: `Range` is still honoured, but no `If-Range`
        /// can match and no conditional request gets a 304.
        case noValidators
        /// Keep the `Last-Modified` of the generation before this attempt's: the file changed
        /// within the second it was dated (an HTTP-date has whole seconds), so only the ETag
        /// tells the two apart.
        case sameDate

        public var description: String {
            switch self {
            case .drop(let offset): "drop:\(offset)"
            case .throttle(let rate): "throttle:\(ByteSize.format(rate))"
            case .stall(let offset, nil): "stall:\(offset)"
            case .stall(let offset, let duration?): "stall:\(offset):\(FaultScript.milliseconds(duration))ms"
            case .ignoreRange, .change: kind.rawValue
            case .status(let code): "status:\(code)"
            case .redirect(let hops): "redirect:\(hops)"
            case .badLength(let delta): "bad-length:\(FaultScript.signed(delta))"
            case .shiftRange(let offset): "shift-range:\(FaultScript.signed(offset))"
            case .chunked, .gzip, .ignoreConditionals, .noValidators, .sameDate: kind.rawValue
            case .cacheControl(let value): "cache-control:\(FaultScript.percentEncoded(value, keeping: "="))"
            case .disposition(let filename): "disposition:\(FaultScript.percentEncoded(filename))"
            case .latency(let duration): "latency:\(FaultScript.milliseconds(duration))ms"
            case .profile(let profile): "profile:\(profile.rawValue)"
            case .connections(let limit): "connections:\(limit)"
            }
        }

        /// An error status in place of the file.
        public var isStatus: Bool { kind == .status }

        /// Faults of the same kind cannot be combined in one attempt (two drops would be ambiguous).
        var kind: Name {
            switch self {
            case .drop: .drop
            case .throttle: .throttle
            case .stall: .stall
            case .ignoreRange: .ignoreRange
            case .change: .change
            case .status: .status
            case .redirect: .redirect
            case .badLength: .badLength
            case .shiftRange: .shiftRange
            case .chunked: .chunked
            case .disposition: .disposition
            case .latency: .latency
            case .profile: .profile
            case .gzip: .gzip
            case .cacheControl: .cacheControl
            case .ignoreConditionals: .ignoreConditionals
            case .connections: .connections
            case .noValidators: .noValidators
            case .sameDate: .sameDate
            }
        }
    }

    /// One list of faults per attempt, attempt 1 first. `ok` is an empty list.
    public let attempts: [[Fault]]

    public init(attempts: [[Fault]]) {
        self.attempts = attempts
    }

    /// Reads `text` (see `parse`).
    public init(parsing text: String) throws { self = try Self.parse(text) }

    /// A script in which every attempt succeeds.
    public var isNone: Bool { attempts.isEmpty }

    /// Where the script's first attempt breaks the transfer of a `bodyLength`-byte body (its
    /// `drop` or `stall`), or nil when the first attempt runs to the end.
    public func breakOffset(bodyLength: Int64) -> Int64? {
        for fault in faults(forAttempt: 1) {
            switch fault {
            case .drop(let offset), .stall(let offset, _): return offset.resolved(bodyLength: bodyLength)
            default: continue
            }
        }
        return nil
    }

    public static let none = FaultScript(attempts: [])

    /// The attempt (1-based) whose stall a kill waits for, or nil where no attempt stalls and
    /// holds the connection for ever: the script's last such attempt, or the first of a row of
    /// identical ones, the GETs of one download side by side (`stall:60pct*4`). A held stall
    /// before it is the program's to leave (by a Pause, a retry) or never to reach.
    public var stallToKillAt: Int? {
        guard var attempt = attempts.lastIndex(where: { attempt in
            attempt.contains { if case .stall(_, nil) = $0 { true } else { false } }
        }) else { return nil }
        while attempt > 0, attempts[attempt - 1] == attempts[attempt] { attempt -= 1 }
        return attempt + 1
    }

    /// The faults of attempt `attempt` (1-based); none past the end of the script.
    public func faults(forAttempt attempt: Int) -> [Fault] {
        attempts.indices.contains(attempt - 1) ? attempts[attempt - 1] : []
    }

    /// How many times the fixture has changed by attempt `attempt`; changes persist past the end.
    public func generation(forAttempt attempt: Int) -> Int {
        attempts.prefix(max(0, attempt)).joined().filter { $0 == .change }.count
    }

    /// This script with every attempt played over `network`, and at least `attempts` attempts, so
    /// that a retry after one of the link's own resets is over the same link.
    public func over(_ network: NetworkProfile, attempts: Int) -> FaultScript {
        let padded = self.attempts + Array(repeating: [], count: max(0, attempts - self.attempts.count))
        return FaultScript(attempts: padded.map { $0 + [.profile(network)] })
    }

    /// This script served as a CDN that paces each connection serves it: every attempt at about
    /// twice the file a second (at least 2 MiB/s), so that the ranges of one file fetched side by
    /// side arrive interleaved, as they do on such a link and on loopback only by chance. Lesson
    /// 11's checks and `lab compare` runs are all paced so (`LessonID.fetchesInSegments`).
    public func pacedPerConnection(forFileOf size: Int64) -> FaultScript {
        paced(bytesPerSecond: max(size * 2, 2 << 20), attempts: 100)
    }

    /// This script with every attempt sent at most `bytesPerSecond`, and at least `attempts`
    /// attempts: a run slow enough for its picture to show each request and the file growing.
    public func paced(bytesPerSecond: Int64, attempts: Int) -> FaultScript {
        let padded = self.attempts + Array(repeating: [], count: max(0, attempts - self.attempts.count))
        return FaultScript(attempts: padded.map { $0.contains { $0.kind == .throttle } ? $0 : $0 + [.throttle(bytesPerSecond: bytesPerSecond)] })
    }

    /// What the fixture holds under this script. Servers compress text, not random bytes (which
    /// gzip makes larger), so a script that compresses any attempt serves a text file throughout.
    public var content: FixtureContent {
        attempts.joined().contains(.gzip) ? .text : .binary
    }

    /// The largest fixture `gzip` compresses. Its compressed length is measured before the head
    /// goes out (about 14 s a GiB in a debug build on 2 busy cores), and a larger file would keep
    /// a client waiting past its time-out (60 s by default) with nothing sent.
    public static let largestCompressedFixture: Int64 = 1 << 30

    /// Refuses, in one line, a fixture of `size` that this script cannot serve.
    public func check(fixtureSize size: Int64) throws {
        if attempts.joined().contains(.gzip), size > Self.largestCompressedFixture {
            throw LabError("gzip serves files up to 1 GiB: the compressed length is measured before "
                           + "the answer, and a larger file would keep the client waiting past its time-out")
        }
    }

    /// The script as `parse` reads it back, for the `faults=` query of a URL: `drop:40pct,ok`.
    /// The empty script is the empty string; an attempt without faults is `ok`.
    public var description: String {
        var runs: [(faults: [Fault], count: Int)] = []
        for faults in attempts {
            if let last = runs.last, last.faults == faults { runs[runs.count - 1].count += 1 } else { runs.append((faults, 1)) }
        }
        // Three or more alike in a row read as one with its count; two stay as they are (`gzip,gzip`).
        return runs.map { run in
            let attempt = run.faults.isEmpty ? "ok" : run.faults.map(\.description).joined(separator: "+")
            return run.count >= 3 ? "\(attempt)*\(run.count)" : Array(repeating: attempt, count: run.count).joined(separator: ",")
        }.joined(separator: ",")
    }

    /// The most times `*N` may repeat an attempt.
    public static let mostRepeats = 1000
    /// The most GETs `connections:` allows at once: more than any client opens to one host.
    public static let mostConnections = 64

    /// A `cache-control:` value longer than this is no server's.
    public static let longestCacheControl = 256

    /// A `disposition:` name can be as long as a hostile server makes it; this is enough for the
    /// 10,000-character names a client must cope with.
    public static let longestDispositionName = 16 << 10

    /// `%XX` but for letters, digits, `-._~` and `kept`, so the name survives the script's own
    /// separators and a URL's query (whose value may hold `=`: a query item ends at its first one).
    fileprivate static func percentEncoded(_ text: String, keeping kept: String = "") -> String {
        PercentEncoding.encoded(text, keeping: "-._~" + kept)
    }

    fileprivate static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    fileprivate static func signed(_ amount: Int64) -> String {
        amount < 0 ? "-" + ByteSize.format(-amount) : "+" + ByteSize.format(amount)
    }
}

/// A script written in the lab's own code (the catalogue's trials). A literal that does not parse
/// is a programming error; the tests run every trial.
extension FaultScript: ExpressibleByStringLiteral {
    public init(stringLiteral text: String) {
        do { self = try Self.parse(text) } catch { preconditionFailure("\(error)") }
    }
}
