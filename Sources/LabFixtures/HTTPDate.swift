import Foundation  // gmtime_r, from the C library Foundation brings on every system

/// IMF-fixdate (RFC 9110 §5.6.7), e.g. `Mon, 01 Jan 2024 00:00:00 GMT`.
///
/// Formatted by hand rather than with a locale-aware formatter, because HTTP dates must be
/// English and byte-exact: If-Range compares them as strings.
package enum HTTPDate {
    /// 2024-01-01 00:00:00 GMT, the Last-Modified of every generation-0 fixture.
    package static let epochOfGenerationZero: Int64 = 1_704_067_200

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    package static func format(secondsSince1970: Int64) -> String {
        var time = time_t(secondsSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        func twoDigits(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekdays[Int(parts.tm_wday)]), \(twoDigits(parts.tm_mday)) \(months[Int(parts.tm_mon)]) "
            + "\(parts.tm_year + 1900) \(twoDigits(parts.tm_hour)):\(twoDigits(parts.tm_min)):\(twoDigits(parts.tm_sec)) GMT"
    }
}
