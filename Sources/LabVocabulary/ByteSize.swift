/// Byte counts as people type them: `1000`, `64KiB`, `64MiB`, `1GiB`, or decimal `5MB`.
///
/// Units are case-insensitive. `KiB`/`MiB`/`GiB`/`TiB` are powers of 1024 and
/// `KB`/`MB`/`GB`/`TB` powers of 1000, so `64MiB` and `64MB` are deliberately different.
public struct ByteSize: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: Int64

    public init(bytes: Int64) { self.bytes = bytes }

    /// Reads `text`, or throws a one-line `LabError` that names it.
    public init(parsing text: String) throws { bytes = try Self.parse(text) }

    /// The shortest exact spelling, e.g. `64MiB`.
    public var description: String { Self.format(bytes) }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.bytes < rhs.bytes }

    /// The largest file the lab serves or sends (the server's fixtures, an upload's file).
    public static let largestFixture: Int64 = 64 << 30

    private static let units: [(suffix: String, multiplier: Int64)] = [
        ("", 1), ("b", 1),
        ("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("tib", 1 << 40),
        ("kb", 1_000), ("mb", 1_000_000), ("gb", 1_000_000_000), ("tb", 1_000_000_000_000),
    ]

    /// Returns the number of bytes `text` stands for, or throws a one-line `LabError`.
    public static func parse(_ text: String) throws -> Int64 {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let suffix = text.dropFirst(digits.count).lowercased()
        guard !digits.isEmpty, let number = Int64(digits),
              let unit = units.first(where: { $0.suffix == suffix })
        else {
            throw LabError("bad size \"\(text)\": expected a byte count like 1000, 64KiB, 64MiB, 1GiB or 5MB")
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: unit.multiplier)
        guard !overflow else {
            throw LabError("bad size \"\(text)\": too large")
        }
        return bytes
    }

    /// The shortest exact spelling of `bytes` that `parse` reads back, e.g. `64MiB` or `1000`.
    public static func format(_ bytes: Int64) -> String {
        for (suffix, multiplier) in [("TiB", Int64(1) << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where bytes != 0 && bytes % multiplier == 0 {
            return "\(bytes / multiplier)\(suffix)"
        }
        return "\(bytes)"
    }
}
