/// Reading a fault script: `drop:40pct,ignore-range*3` into the faults of each attempt, every
/// token checked up front, each error one line that names the bad token.
extension FaultScript {
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
        let fail = { (expectation: String) in LabError("bad fault \"\(token)\": \(expectation)") }
        guard let name = Name(rawValue: parts[0]) else {
            throw fail("unknown fault (known: \(Name.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        switch name.form {
        case .bare(let fault):
            guard arguments.isEmpty else { throw fail("\(name.rawValue) takes no value") }
            return fault
        case .offsetAndDuration:
            return try parseStall(arguments, fail: fail)
        case .oneValue(let shape):
            guard arguments.count == 1 else { throw fail("expected " + shape) }
            return try parseValue(of: name, arguments[0], fail: fail)
        }
    }

    private static func parseValue(of name: Name, _ value: String, fail: (String) -> LabError) throws -> Fault? {
        switch name {
        case .drop:
            return .drop(after: try parseOffset(value, orThrow: fail("expected bytes or Npct")))
        case .throttle:
            guard let rate = try? ByteSize.parse(value), rate > 0 else { throw fail("expected a positive rate in bytes per second, like 2MiB") }
            return .throttle(bytesPerSecond: rate)
        case .status:
            guard let code = Int(value), (400...599).contains(code) else { throw fail("expected an error status code from 400 to 599") }
            return .status(code: code)
        case .redirect:
            guard let hops = Int(value), (1...20).contains(hops) else { throw fail("expected a number of hops from 1 to 20") }
            return .redirect(hops: hops)
        case .badLength:
            // Added to a body length, it must not overflow; past the largest fixture it means nothing more.
            guard let delta = parseSignedAmount(value), delta != 0, delta.magnitude <= ByteSize.largestFixture else {
                throw fail("expected +<bytes> or -<bytes>, like +100 or -1KiB, at most \(ByteSize.format(ByteSize.largestFixture))")
            }
            return .badLength(delta: delta)
        case .shiftRange:
            // A zero shift would be a fault that does nothing; reject it like a typo.
            guard let offset = parseSignedAmount(value), offset != 0 else { throw fail("expected +n or -n") }
            return .shiftRange(offset: offset)
        case .disposition:
            guard let filename = PercentEncoding.decoded(value), !filename.isEmpty, filename.utf8.count <= longestDispositionName else {
                throw fail("expected a file name of 1 to \(longestDispositionName) bytes, percent-encoded UTF-8 (%2F for /, %2C for ,)")
            }
            return .disposition(filename: filename)
        case .cacheControl:
            // Printable ASCII only: a control character in a header value would be a header of its own.
            guard let value = PercentEncoding.decoded(value), !value.isEmpty, value.utf8.count <= longestCacheControl,
                  value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                throw fail("expected a value of 1 to \(longestCacheControl) printable ASCII characters, percent-encoded (%2C for ,), like max-age=3600")
            }
            return .cacheControl(value)
        case .latency:
            guard let duration = parseDuration(value), duration <= .seconds(10) else { throw fail("expected a delay up to 10 s, like 300ms or 0.3s") }
            return .latency(duration)
        case .profile:
            guard let profile = NetworkProfile(rawValue: value) else {
                throw fail("unknown profile (known: \(NetworkProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return .profile(profile)
        case .connections:
            guard let limit = Int(value), (1...mostConnections).contains(limit) else {
                throw fail("expected the GETs allowed at once, from 1 to \(mostConnections)")
            }
            return .connections(limit: limit)
        case .ok, .ignoreRange, .change, .chunked, .gzip, .ignoreConditionals, .noValidators, .sameDate, .stall:
            // Their forms are not one value: parseToken never sends them here.
            throw fail("\(name.rawValue) takes no single value")
        }
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
}
