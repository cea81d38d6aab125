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
            case .chunked, .gzip: kind.rawValue
            case .disposition(let filename): "disposition:\(FaultScript.percentEncoded(filename))"
            case .latency(let duration): "latency:\(FaultScript.milliseconds(duration))ms"
            case .profile(let profile): "profile:\(profile.rawValue)"
            }
        }

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

    /// Parses and validates the whole script up front, so a typo is reported on the first
    /// request instead of surfacing in attempt 3. Errors are one line and name the bad token.
    public static func parse(_ text: String) throws -> FaultScript {
        if text.isEmpty { return .none }
        var attempts: [[Fault]] = []
        for piece in text.split(separator: ",", omittingEmptySubsequences: false) {
            let (attemptText, count) = try repeats(of: piece, in: text)
            let faults = try attempt(attemptText, in: text)
            attempts += Array(repeating: faults, count: count)
        }
        return FaultScript(attempts: attempts)
    }

    /// `drop:64KiB*40` → ("drop:64KiB", 40); an attempt without `*N` → (itself, 1).
    private static func repeats(of piece: Substring, in text: String) throws -> (Substring, Int) {
        guard let star = piece.lastIndex(of: "*") else { return (piece, 1) }
        guard let count = Int(piece[piece.index(after: star)...]), (1...mostRepeats).contains(count) else {
            throw LabError("bad fault script \"\(text)\": expected *N after an attempt, N from 1 to \(mostRepeats) (drop:64KiB*40)")
        }
        return (piece[..<star], count)
    }

    private static func attempt(_ attemptText: Substring, in text: String) throws -> [Fault] {
        guard !attemptText.isEmpty else {
            throw LabError("bad fault script \"\(text)\": empty attempt (use ok for an attempt without faults)")
        }
        var faults: [Fault] = []
        for token in tokens(of: attemptText) {
            guard let fault = try parseToken(token) else { continue }
            if faults.contains(where: { $0.kind == fault.kind }) {
                throw LabError("bad fault \"\(token)\": only one \(fault.kind.rawValue) per attempt")
            }
            // A profile sets the attempt's own rate and latency.
            let kinds = Set([fault.kind] + faults.map(\.kind))
            if kinds.contains(.profile), let other = kinds.first(where: { $0 == .throttle || $0 == .latency }) {
                throw LabError("bad fault \"\(token)\": profile and \(other.rawValue) do not go together (a profile sets its own rate and latency)")
            }
            // A chunked body has no Content-Length to get wrong.
            if Set([fault.kind] + faults.map(\.kind)).isSuperset(of: [.chunked, .badLength]) {
                throw LabError("bad fault \"\(token)\": chunked and bad-length do not go together (a chunked body has no Content-Length)")
            }
            faults.append(fault)
        }
        return faults
    }

    /// Splits an attempt at "+", except where "+" starts a value (`bad-length:+10`, `shift-range:+100`).
    private static func tokens(of attemptText: Substring) -> [String] {
        var tokens: [String] = []
        for piece in attemptText.split(separator: "+", omittingEmptySubsequences: false) {
            if let previous = tokens.last, previous.hasSuffix(":") {
                tokens[tokens.count - 1] = previous + "+" + piece
            } else {
                tokens.append(String(piece))
            }
        }
        return tokens
    }

    /// Returns nil for `ok`.
    private static func parseToken(_ token: String) throws -> Fault? {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let arguments = Array(parts.dropFirst())
        func fail(_ expectation: String) -> LabError {
            LabError("bad fault \"\(token)\": \(expectation)")
        }
        func requireArguments(_ count: Int, _ expectation: String) throws {
            guard arguments.count == count else { throw fail(expectation) }
        }

        guard let name = Name(rawValue: parts[0]) else {
            throw fail("unknown fault (known: \(Name.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        switch name {
        case .ok:
            try requireArguments(0, "ok takes no value")
            return nil
        case .drop:
            try requireArguments(1, "expected drop:<bytes or Npct>")
            return .drop(after: try parseOffset(arguments[0], orThrow: fail("expected bytes or Npct")))
        case .throttle:
            try requireArguments(1, "expected throttle:<bytes per second>")
            guard let rate = try? ByteSize.parse(arguments[0]), rate > 0 else {
                throw fail("expected a positive rate in bytes per second, like 2MiB")
            }
            return .throttle(bytesPerSecond: rate)
        case .stall:
            return try parseStall(arguments, fail: fail)
        case .ignoreRange:
            try requireArguments(0, "ignore-range takes no value")
            return .ignoreRange
        case .change:
            try requireArguments(0, "change takes no value")
            return .change
        case .status:
            try requireArguments(1, "expected status:<code>")
            guard let code = Int(arguments[0]), (400...599).contains(code) else {
                throw fail("expected an error status code from 400 to 599")
            }
            return .status(code: code)
        case .redirect:
            try requireArguments(1, "expected redirect:<hops>")
            guard let hops = Int(arguments[0]), (1...20).contains(hops) else {
                throw fail("expected a number of hops from 1 to 20")
            }
            return .redirect(hops: hops)
        case .badLength:
            try requireArguments(1, "expected bad-length:+<bytes> or bad-length:-<bytes>")
            // Added to a body length, it must not overflow; past the largest fixture it means nothing more.
            guard let delta = parseSignedAmount(arguments[0]), delta != 0, delta.magnitude <= ByteSize.largestFixture else {
                throw fail("expected +<bytes> or -<bytes>, like +100 or -1KiB, at most \(ByteSize.format(ByteSize.largestFixture))")
            }
            return .badLength(delta: delta)
        case .shiftRange:
            try requireArguments(1, "expected shift-range:+n or shift-range:-n")
            // A zero shift would be a fault that does nothing; reject it like a typo.
            guard let offset = parseSignedAmount(arguments[0]), offset != 0 else {
                throw fail("expected +n or -n")
            }
            return .shiftRange(offset: offset)
        case .chunked:
            try requireArguments(0, "chunked takes no value")
            return .chunked
        case .disposition:
            try requireArguments(1, "expected disposition:<file name, percent-encoded>")
            guard let filename = PercentEncoding.decoded(arguments[0]), !filename.isEmpty,
                  filename.utf8.count <= longestDispositionName else {
                throw fail("expected a file name of 1 to \(longestDispositionName) bytes, percent-encoded UTF-8 (%2F for /, %2C for ,)")
            }
            return .disposition(filename: filename)
        case .latency:
            try requireArguments(1, "expected latency:<milliseconds>ms")
            guard let duration = parseDuration(arguments[0]), duration <= .seconds(10) else {
                throw fail("expected a delay up to 10 s, like 300ms or 0.3s")
            }
            return .latency(duration)
        case .gzip:
            try requireArguments(0, "gzip takes no value")
            return .gzip
        case .profile:
            let known = NetworkProfile.allCases.map(\.rawValue).joined(separator: ", ")
            try requireArguments(1, "expected profile:<name> (known: \(known))")
            guard let profile = NetworkProfile(rawValue: arguments[0]) else { throw fail("unknown profile (known: \(known))") }
            return .profile(profile)
        }
    }

    /// A `disposition:` name can be as long as a hostile server makes it; this is enough for the
    /// 10,000-character names a client must cope with.
    public static let longestDispositionName = 16 << 10

    /// Every byte but letters, digits and `-._~` as `%XX`, so the name survives the script's
    /// own separators and a URL's query.
    fileprivate static func percentEncoded(_ text: String) -> String {
        text.utf8.map { byte in
            let scalar = Unicode.Scalar(byte)
            return byte < 0x80 && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-._~".unicodeScalars.contains(scalar))
                ? String(scalar) : String(format: "%%%02X", byte)
        }.joined()
    }

    /// `stall:<offset>` stops for good; `stall:<offset>:<duration>` resumes after the duration.
    private static func parseStall(_ arguments: [String], fail: (String) -> LabError) throws -> Fault {
        guard arguments.count == 1 || arguments.count == 2 else {
            throw fail("expected stall:<bytes or Npct> or stall:<bytes or Npct>:<seconds>s")
        }
        let offset = try parseOffset(arguments[0], orThrow: fail("expected bytes or Npct"))
        guard arguments.count == 2 else { return .stall(after: offset, duration: nil) }
        guard let duration = parseDuration(arguments[1]) else {
            throw fail("expected a duration like 2s, 0.5s or 500ms")
        }
        return .stall(after: offset, duration: duration)
    }

    private static func parseOffset(_ text: String, orThrow error: LabError) throws -> Offset {
        if text.hasSuffix("pct") {
            guard let percent = Int(text.dropLast(3)), (0...100).contains(percent) else { throw error }
            return .percent(percent)
        }
        guard let bytes = try? ByteSize.parse(text) else { throw error }
        return .bytes(bytes)
    }

    /// `+<size>` or `-<size>`; the sign is required, so a forgotten one is not taken as `+`.
    private static func parseSignedAmount(_ text: String) -> Int64? {
        guard let sign = text.first, sign == "+" || sign == "-",
              let amount = try? ByteSize.parse(String(text.dropFirst()))
        else { return nil }
        return sign == "+" ? amount : -amount
    }

    private static func parseDuration(_ text: String) -> Duration? {
        let (number, scale): (Substring, Double) =
            text.hasSuffix("ms") ? (text.dropLast(2), 0.001) : text.hasSuffix("s") ? (text.dropLast(1), 1) : ("", 0)
        guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
              let value = Double(number), value.isFinite, value * scale <= 3600
        else { return nil }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
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
