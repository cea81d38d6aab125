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
}
