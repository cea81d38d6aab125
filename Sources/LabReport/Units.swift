import Foundation

/// How the report writes numbers for people. Sizes, memory and throughput all use binary units
/// (1 MiB = 2^20 bytes), so a 256 MiB file and 256 MiB of memory are the same amount.
enum Units {
    /// A binary unit and the number of bytes in one of it.
    struct ByteUnit {
        let name: String
        let bytes: Double

        static let all = [
            ByteUnit(name: "B", bytes: 1),
            ByteUnit(name: "KiB", bytes: 1024),
            ByteUnit(name: "MiB", bytes: 1024 * 1024),
            ByteUnit(name: "GiB", bytes: 1024 * 1024 * 1024),
            ByteUnit(name: "TiB", bytes: 1024 * 1024 * 1024 * 1024),
        ]

        /// The largest unit that keeps `value` at 1 or more.
        static func fitting(_ value: Double) -> ByteUnit {
            all.last { $0.bytes <= value.magnitude } ?? all[0]
        }
    }

    /// 40123456 → "38.3 MiB", 268435456 → "256 MiB".
    static func bytes(_ value: Int64) -> String {
        bytes(Double(value))
    }

    static func bytes(_ value: Double) -> String {
        let unit = ByteUnit.fitting(value)
        return "\(decimal(value / unit.bytes)) \(unit.name)"
    }

    /// Bytes per second → "112 MiB/s".
    static func rate(_ bytesPerSecond: Double) -> String {
        bytes(bytesPerSecond) + "/s"
    }

    /// Seconds for a table column headed "s": 0.614 → "0.61", 35.21 → "35.2".
    static func seconds(_ value: Double) -> String {
        decimal(value, minimumFractionDigits: value < 10 ? 2 : value < 100 ? 1 : 0)
    }

    /// A long span of time: 252.3 → "4 min 12 s".
    static func duration(_ seconds: Double) -> String {
        // Beyond a year it is not a duration anyone measured; shown as plain seconds.
        guard seconds >= 60, seconds < 366 * 86_400 else { return "\(self.seconds(seconds)) s" }
        let whole = Int(seconds.rounded())
        if whole < 3600 { return "\(whole / 60) min \(whole % 60) s" }
        return "\(whole / 3600) h \(whole % 3600 / 60) min"
    }

    /// A ratio to two significant digits: 0.614 → "0.61×", 2.14 → "2.1×", 12.3 → "12×".
    static func multiple(_ value: Double) -> String {
        String(format: value < 1 ? "%.2f×" : value < 10 ? "%.1f×" : "%.0f×", value)
    }

    /// A ratio close to 1, to two decimals: 1.0734 → "1.07×".
    static func ratio(_ value: Double) -> String {
        String(format: "%.2f×", value)
    }

    /// "2025-11-22T10:10:07Z" → "2025-11-22 10:10 UTC"; anything unparsable as it is.
    static func date(_ iso8601: String) -> String {
        let parser = ISO8601DateFormatter()
        var date = parser.date(from: iso8601)
        if date == nil {
            parser.formatOptions.insert(.withFractionalSeconds)
            date = parser.date(from: iso8601)
        }
        guard let date else { return iso8601 }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter.string(from: date)
    }

    /// About three significant digits, trailing zeros dropped: 38.29 → "38.3", 1.25 → "1.25",
    /// 256.0 → "256". Always a point as the decimal separator, whatever the locale.
    static func decimal(_ value: Double, minimumFractionDigits: Int = 0) -> String {
        let magnitude = value.magnitude
        let digits = magnitude < 10 ? 2 : magnitude < 100 ? 1 : 0
        var text = String(format: "%.\(max(digits, minimumFractionDigits))f", value)
        if text.contains(".") {
            let fixedLength = text.distance(from: text.startIndex, to: text.firstIndex(of: ".")!) + 1 + minimumFractionDigits
            while text.count > fixedLength, text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }
}
