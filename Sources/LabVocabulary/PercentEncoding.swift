/// `%XX` decoding that refuses what is not UTF-8, for the lab server's query items and the fault
/// script's file names. Foundation's `URLComponents.queryItems` drops such a value without a
/// word, which would turn a bad fault script into no fault at all. And the one encoder the lab
/// writes `%XX` with.
public enum PercentEncoding {
    /// Every UTF-8 byte as `%XX` (upper-case hex) but ASCII letters, digits and the punctuation in
    /// `kept`: what each use keeps readable is its own (a fault script's separators, RFC 8187's
    /// attribute characters).
    public static func encoded(_ text: String, keeping kept: String) -> String {
        let keptBytes = Set(kept.utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            let isAlphanumeric = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            if isAlphanumeric || keptBytes.contains(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `%XX` sequences decoded as UTF-8; nil when one is malformed or the bytes are not UTF-8.
    /// Every other character stands for itself, `+` included: fault scripts join faults with it.
    public static func decoded(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            guard utf8[index] == UInt8(ascii: "%") else {
                bytes.append(utf8[index])
                index += 1
                continue
            }
            guard index + 2 < utf8.count, let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2]) else { return nil }
            bytes.append(high << 4 | low)
            index += 3
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
