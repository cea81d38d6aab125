import Foundation

/// Byte counts as people read them.
public enum ByteFormat {
    /// 1536 → "1.5 KiB".
    public static func iec(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while abs(value) >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// 67108864 → "67,108,864".
    public static func grouped(_ bytes: Int64) -> String {
        let digits = String(bytes.magnitude)
        var groups: [Substring] = []
        var end = digits.endIndex
        while end > digits.startIndex {
            let start = digits.index(end, offsetBy: -3, limitedBy: digits.startIndex) ?? digits.startIndex
            groups.insert(digits[start..<end], at: 0)
            end = start
        }
        return (bytes < 0 ? "-" : "") + groups.joined(separator: ",")
    }
}
