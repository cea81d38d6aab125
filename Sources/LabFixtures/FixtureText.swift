/// The text behind a `.text` fixture: lines of 64 bytes that read like a server's log,
///
///     0000002a resume  range   etag    socket  9f03c2a1 206 OK        ⏎
///
/// the line's number in hex, four words from a list of sixteen, eight random hex digits and a
/// status, padded with spaces to 63 characters and a newline. Line `n` depends only on `n` and the
/// seed, so any offset costs the same as the first, as with `FixtureBytes`. gzip at level 1 shrinks
/// it about four times.
///
/// Each line is eight 8-byte words, built with integer arithmetic only: like `FixtureBytes`, this
/// runs in unoptimized debug builds, where a loop over bytes would cost seconds per 64 MiB.
struct FixtureText {
    let seed: UInt64

    static let lineLength = 64

    /// Eight bytes each, a space first: " resume ", " etag   ".
    private static let words: [UInt64] = [
        "bytes", "resume", "range", "etag", "stream", "socket", "buffer", "header",
        "chunk", "digest", "retry", "offset", "length", "cache", "proxy", "server",
    ].map { word(" " + $0) }
    private static let statuses: [UInt64] = [" 200 OK ", " 206 OK ", " 304 OK ", " 200 OK "].map(word)
    private static let lineEnd = word("       \n")

    /// Eight characters as one word whose bytes in memory are the characters in order.
    private static func word(_ text: String) -> UInt64 {
        let bytes = Array(text.utf8) + Array(repeating: UInt8(ascii: " "), count: max(0, 8 - text.utf8.count))
        return bytes.prefix(8).enumerated().reduce(0) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
    }

    /// `value`'s eight hex digits, most significant first in memory.
    private static func hex(_ value: UInt32) -> UInt64 {
        // Spread the nibbles one per byte, lowest nibble in the lowest byte, then reverse the bytes.
        var x = UInt64(value)
        x = (x | (x &<< 16)) & 0x0000_FFFF_0000_FFFF
        x = (x | (x &<< 8)) & 0x00FF_00FF_00FF_00FF
        x = (x | (x &<< 4)) & 0x0F0F_0F0F_0F0F_0F0F
        x = x.byteSwapped
        // '0' + nibble, and 39 more for a nibble from 10 ('a' is '0' + 49).
        let letters = ((x &+ 0x0606_0606_0606_0606) &>> 4) & 0x0101_0101_0101_0101
        return x &+ 0x3030_3030_3030_3030 &+ letters &* 39
    }

    func fill(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int64) {
        guard let destination = buffer.baseAddress, buffer.count > 0 else { return }
        precondition(offset >= 0, "fixture offsets start at 0")
        let length = Self.lineLength
        withUnsafeTemporaryAllocation(byteCount: length, alignment: 8) { scratch in
            var written = 0
            var line = UInt64(offset / Int64(length))
            var skip = Int(offset % Int64(length))
            while written < buffer.count {
                let take = min(length - skip, buffer.count - written)
                if skip == 0 && take == length {
                    write(line: line, into: destination + written)
                } else {
                    write(line: line, into: scratch.baseAddress!)
                    (destination + written).copyMemory(from: scratch.baseAddress! + skip, byteCount: take)
                }
                written &+= take
                line &+= 1
                skip = 0
            }
        }
    }

    private func write(line: UInt64, into bytes: UnsafeMutableRawPointer) {
        let random = FixtureBytes.mix(seed &+ (line &+ 1) &* 0x9E37_79B9_7F4A_7C15)
        let words = Self.words
        // Stored little-endian, so the characters land in order whatever the machine.
        bytes.storeBytes(of: Self.hex(UInt32(truncatingIfNeeded: line)).littleEndian, toByteOffset: 0, as: UInt64.self)
        bytes.storeBytes(of: words[Int(random & 15)].littleEndian, toByteOffset: 8, as: UInt64.self)
        bytes.storeBytes(of: words[Int((random &>> 4) & 15)].littleEndian, toByteOffset: 16, as: UInt64.self)
        bytes.storeBytes(of: words[Int((random &>> 8) & 15)].littleEndian, toByteOffset: 24, as: UInt64.self)
        bytes.storeBytes(of: words[Int((random &>> 12) & 15)].littleEndian, toByteOffset: 32, as: UInt64.self)
        bytes.storeBytes(of: Self.hex(UInt32(truncatingIfNeeded: random &>> 32)).littleEndian, toByteOffset: 40, as: UInt64.self)
        bytes.storeBytes(of: Self.statuses[Int((random &>> 16) & 3)].littleEndian, toByteOffset: 48, as: UInt64.self)
        bytes.storeBytes(of: Self.lineEnd.littleEndian, toByteOffset: 56, as: UInt64.self)
    }
}
