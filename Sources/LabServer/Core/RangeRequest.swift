/// How a request's `Range` and `If-Range` headers select the bytes to send (RFC 9110 §14).
///
/// Only a single byte range is supported. Anything this server does not understand is
/// ignored rather than rejected, as nginx does: the client then simply gets the full body.
enum RangeSelection: Equatable {
    /// 200 with the whole representation.
    case full
    /// 206 with these bytes; `last` is already clamped to the fixture size.
    case partial(first: Int64, last: Int64)
    /// 416: the range is well-formed but no byte of it exists.
    case unsatisfiable

    /// `validatorsSent` false: the server sends no validator (`no-validators`), so no `If-Range`
    /// can name the current version.
    init(range: String?, ifRange: String?, etag: String, lastModified: String, size: Int64, validatorsSent: Bool) {
        guard let range else {
            self = .full
            return
        }
        if let ifRange, !validatorsSent || !Self.ifRangeMatches(ifRange, etag: etag, lastModified: lastModified) {
            self = .full
            return
        }
        self = Self.parse(range, size: size)
    }

    /// A strong ETag comparison, or an exact date match; a weak tag (`W/"…"`) never matches,
    /// because a weak validator cannot promise byte-identical content.
    static func ifRangeMatches(_ ifRange: String, etag: String, lastModified: String) -> Bool {
        if ifRange.hasPrefix("\"") {
            return ifRange == etag
        }
        if ifRange.hasPrefix("W/") {
            return false
        }
        return ifRange == lastModified
    }

    static func parse(_ header: String, size: Int64) -> RangeSelection {
        let unitAndSet = header.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard unitAndSet.count == 2, unitAndSet[0].lowercased() == "bytes" else { return .full }
        // The list syntax allows optional whitespace around each range.
        var spec = unitAndSet[1]
        while spec.first == " " || spec.first == "\t" { spec.removeFirst() }
        while spec.last == " " || spec.last == "\t" { spec.removeLast() }
        guard !spec.contains(",") else { return .full }
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return .full }
        let firstText = bounds[0], lastText = bounds[1]

        if firstText.isEmpty {
            // Suffix range: the last n bytes.
            guard let suffixLength = decimal(lastText) else { return .full }
            guard suffixLength > 0, size > 0 else { return .unsatisfiable }
            return .partial(first: max(0, size - suffixLength), last: size - 1)
        }
        guard let first = decimal(firstText) else { return .full }
        let last: Int64
        if lastText.isEmpty {
            last = Int64.max
        } else {
            guard let parsedLast = decimal(lastText), parsedLast >= first else { return .full }
            last = parsedLast
        }
        guard first < size else { return .unsatisfiable }
        return .partial(first: first, last: min(last, size - 1))
    }

    /// The `shift-range` fault: a 206 whose first byte is `offset` bytes off, ending where the
    /// asked-for range ends. It stays within the file and keeps at least the last byte, so the
    /// answer is still a truthful, satisfiable 206. A 200 or 416 is left alone.
    func shifted(by offset: Int64) -> RangeSelection {
        guard case .partial(let first, let last) = self else { return self }
        let (moved, overflow) = first.addingReportingOverflow(offset)
        let shiftedFirst = overflow ? (offset > 0 ? last : 0) : min(max(moved, 0), last)
        return .partial(first: shiftedFirst, last: last)
    }

    /// ASCII digits only (no sign, no spaces); huge values saturate instead of failing,
    /// since "beyond the end" is all that matters for a position that large.
    private static func decimal(_ text: Substring) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            value = overflow1 || overflow2 ? Int64.max : sum
        }
        return value
    }
}
