/// Byte counts as people type them: `1000`, `64KiB`, `64MiB`, `1GiB`, or decimal `5MB`.
///
/// Units are case-insensitive. `KiB`/`MiB`/`GiB`/`TiB` are powers of 1024 and
/// `KB`/`MB`/`GB`/`TB` powers of 1000, so `64MiB` and `64MB` are deliberately different.
public struct ByteSize {
    private static let units: [(suffix: String, multiplier: Int64)] = [
        ("", 1), ("b", 1),
        ("kib", 1 << 10), ("mib", 1 << 20), ("gib", 1 << 30), ("tib", 1 << 40),
        ("kb", 1_000), ("mb", 1_000_000), ("gb", 1_000_000_000), ("tb", 1_000_000_000_000),
    ]

    /// Returns the number of bytes `text` stands for, or throws a one-line `LabServerError`.
    public static func parse(_ text: String) throws -> Int64 {
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        let suffix = text.dropFirst(digits.count).lowercased()
        guard !digits.isEmpty, let number = Int64(digits),
              let unit = units.first(where: { $0.suffix == suffix })
        else {
            throw LabServerError("bad size \"\(text)\": expected a byte count like 1000, 64KiB, 64MiB, 1GiB or 5MB")
        }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: unit.multiplier)
        guard !overflow else {
            throw LabServerError("bad size \"\(text)\": too large")
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
