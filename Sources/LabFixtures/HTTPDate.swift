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

    /// The seconds an HTTP-date names, in any of the three forms a recipient must read (RFC 9110
    /// §5.6.7): IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime's (`Sun Nov  6 08:49:37 1994`); nil for
    /// anything else.
    package static func parse(_ text: String) -> Int64? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let day: Int?, month: Int?, year: Int?, clock: String
        switch words.count {
        case 6 where words[5] == "GMT" && words[0].hasSuffix(","):  // IMF-fixdate
            (day, month, year, clock) = (Int(words[1]), months.firstIndex(of: words[2]), Int(words[3]), words[4])
        case 4 where words[3] == "GMT" && words[0].hasSuffix(","):  // RFC 850: a two-digit year
            let parts = words[1].split(separator: "-").map(String.init)
            guard parts.count == 3, let short = Int(parts[2]), parts[2].count == 2 else { return nil }
            (day, month, year, clock) = (Int(parts[0]), months.firstIndex(of: parts[1]), fullYear(short), words[2])
        case 5 where !words[0].hasSuffix(","):  // asctime
            (day, month, year, clock) = (Int(words[2]), months.firstIndex(of: words[1]), Int(words[4]), words[3])
        default:
            return nil
        }
        let time = clock.split(separator: ":").compactMap { Int($0) }
        guard let day, let month, let year, (1...31).contains(day), (1900...9999).contains(year), time.count == 3,
              (0...23).contains(time[0]), (0...59).contains(time[1]), (0...60).contains(time[2]) else { return nil }
        var parts = tm()
        (parts.tm_year, parts.tm_mon, parts.tm_mday) = (Int32(year - 1900), Int32(month), Int32(day))
        (parts.tm_hour, parts.tm_min, parts.tm_sec) = (Int32(time[0]), Int32(time[1]), Int32(time[2]))
        return Int64(timegm(&parts))
    }

    /// RFC 9110 §5.6.7: a two-digit year that would be more than 50 years in the future is the
    /// most recent past year with those digits.
    private static func fullYear(_ twoDigits: Int) -> Int {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        let thisYear = Int(parts.tm_year) + 1900
        let candidate = thisYear - thisYear % 100 + twoDigits
        return candidate > thisYear + 50 ? candidate - 100 : candidate
    }
}
