/// The one form of `Range` the lessons send to resume, `bytes=N-` ("everything from N on"), read
/// back by whoever counts resumes: a lesson's record, and the exercise checks.
public enum RangeHeader {
    /// N of "bytes=N-"; nil for any other form.
    public static func start(of header: String) -> Int64? {
        guard header.hasPrefix("bytes="), header.hasSuffix("-") else { return nil }
        let digits = header.dropFirst("bytes=".count).dropLast()
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(digits)
    }

    /// N of "bytes=N-M", the form a segment of lesson 11 asks for; nil for any other form.
    public static func segmentStart(of header: String) -> Int64? { segment(of: header)?.first }

    /// (N, M) of "bytes=N-M"; nil for any other form.
    public static func segment(of header: String) -> (first: Int64, last: Int64)? {
        guard header.hasPrefix("bytes=") else { return nil }
        let bounds = header.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]), first <= last,
              bounds.allSatisfy({ $0.allSatisfy { $0.isASCII && $0.isNumber } })
        else { return nil }
        return (first, last)
    }
}
