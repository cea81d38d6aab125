import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary

// MARK: - Property lists

enum PropertyList {
    /// The plist in `data`, or nil. XML and binary only: OpenStep text is not what iOS writes, its
    /// parser takes almost any word for a string, and CoreFoundation logs its complaints about
    /// other text to stderr. So only data that starts like an XML or binary plist is parsed.
    /// Binary plists are read by ``BinaryPropertyList``, because `PropertyListSerialization`
    /// crashes on some damaged ones on Linux.
    static func parse(_ data: Data) -> Any? {
        if data.starts(with: Array("bplist".utf8)) { return BinaryPropertyList.parse(data) }
        guard looksLikeXMLOrBinary(data) else { return nil }
        var format = PropertyListSerialization.PropertyListFormat.xml
        guard let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: &format),
              format != .openStep else { return nil }
        return plist
    }

    /// `bplist`, or `<` after an optional byte order mark and white space.
    static func looksLikeXMLOrBinary(_ data: Data) -> Bool {
        if data.starts(with: Array("bplist".utf8)) { return true }
        var bytes = data.prefix(1024)[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let first = bytes.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return first == UInt8(ascii: "<")
    }

    /// A plist boolean. Not `value is Bool`: on Linux an NSNumber holding 0 or 1 passes that test,
    /// so the integer 1 would count as `true`. Parsers give booleans as Swift `Bool` (corelibs, and
    /// ``BinaryPropertyList``) or as an NSNumber of type `c` (Darwin's CFBoolean).
    static func isBoolean(_ value: Any) -> Bool {
        if type(of: value) == Bool.self { return true }
        guard let number = value as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    /// "an array", "a string", … for messages.
    static func kind(of value: Any) -> String {
        switch value {
        case _ where isBoolean(value): "a boolean"
        case is String: "a string"
        case is NSNumber: "a number"
        case is Data: "data"
        case is Date: "a date"
        case is [Any]: "an array"
        case is [String: Any]: "a dictionary"
        case _ where KeyedArchive.uid(value) != nil: "an object reference"
        default: "something else"
        }
    }
}

// MARK: - Binary property lists

/// A reader for `bplist00`, the binary property list format, giving the same Swift values
/// `PropertyListSerialization` gives (String, NSNumber, Bool, Data, Date, [Any], [String: Any])
/// and ``KeyedArchive/UID`` for archive references.
///
/// Why not `PropertyListSerialization`: on Linux it crashes the process (a null pointer while
/// bridging an `NSSet` to Swift) on a binary plist that holds a set, which a damaged file easily
/// does; found by fuzzing. Every offset, length and reference here is bounds-checked, nesting is
/// limited, and so is the total number of values built (a small file can name the same array
/// from many places), so damaged input only yields nil.
enum BinaryPropertyList {
    private static let maximumDepth = 64
    private static let maximumValues = 1_000_000

    static func parse(_ data: Data) -> Any? {
        var reader = Reader(bytes: [UInt8](data))
        return reader.document()
    }

    private struct Reader {
        let bytes: [UInt8]
        var offsetTable: [Int] = []
        var referenceSize = 0
        var budget = BinaryPropertyList.maximumValues

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// Big-endian unsigned integer of `size` (1...8) bytes at `offset`.
        func unsigned(at offset: Int, size: Int) -> UInt64? {
            guard size >= 1, size <= 8, offset >= 0, offset <= bytes.count - size else { return nil }
            var value: UInt64 = 0
            for index in offset..<offset + size { value = value << 8 | UInt64(bytes[index]) }
            return value
        }

        mutating func document() -> Any? {
            // Header "bplist00", objects, offset table, 32-byte trailer.
            guard bytes.count >= 8 + 1 + 32, bytes.starts(with: Array("bplist00".utf8)) else { return nil }
            let trailer = bytes.count - 32
            let offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
                  let objectCount = unsigned(at: trailer + 8, size: 8),
                  let topObject = unsigned(at: trailer + 16, size: 8),
                  let tableOffset = unsigned(at: trailer + 24, size: 8),
                  objectCount >= 1, objectCount <= UInt64(trailer), topObject < objectCount,
                  tableOffset >= 8, tableOffset <= UInt64(trailer),
                  (UInt64(trailer) - tableOffset) / UInt64(offsetSize) >= objectCount else { return nil }
            offsetTable.reserveCapacity(Int(objectCount))
            for index in 0..<Int(objectCount) {
                guard let offset = unsigned(at: Int(tableOffset) + index * offsetSize, size: offsetSize),
                      offset >= 8, offset < tableOffset else { return nil }
                offsetTable.append(Int(offset))
            }
            return object(Int(topObject), depth: 0)
        }

        /// A length: the low nibble, or (0xF) an integer object right after the marker.
        func length(at offset: Int) -> (length: Int, start: Int)? {
            let nibble = Int(bytes[offset] & 0x0F)
            guard nibble == 0x0F else { return (nibble, offset + 1) }
            guard offset + 1 < bytes.count, bytes[offset + 1] & 0xF0 == 0x10 else { return nil }
            let size = 1 << Int(bytes[offset + 1] & 0x0F)
            guard size <= 8, let value = unsigned(at: offset + 2, size: size), value <= UInt64(bytes.count) else { return nil }
            return (Int(value), offset + 2 + size)
        }

        mutating func object(_ reference: Int, depth: Int) -> Any? {
            guard depth < BinaryPropertyList.maximumDepth, budget > 0,
                  offsetTable.indices.contains(reference) else { return nil }
            budget -= 1
            let offset = offsetTable[reference]
            let marker = bytes[offset]
            let nibble = Int(marker & 0x0F)
            switch marker >> 4 {
            case 0x0:
                switch marker {
                case 0x08: return false
                case 0x09: return true
                default: return nil  // null and fill bytes never appear in what Foundation writes
                }
            case 0x1:  // integer of 2^nibble bytes; 1, 2, 4 unsigned, 8 signed, 16 the low 8 of an unsigned
                switch nibble {
                case 0...3:
                    guard let value = unsigned(at: offset + 1, size: 1 << nibble) else { return nil }
                    return nibble == 3 ? NSNumber(value: Int64(bitPattern: value)) : NSNumber(value: value)
                case 4:
                    guard let high = unsigned(at: offset + 1, size: 8), let low = unsigned(at: offset + 9, size: 8)
                    else { return nil }
                    return high == 0 ? NSNumber(value: low) : nil
                default: return nil
                }
            case 0x2:  // real of 4 or 8 bytes
                guard let bits = unsigned(at: offset + 1, size: 1 << nibble) else { return nil }
                switch nibble {
                case 2: return NSNumber(value: Float(bitPattern: UInt32(bits)))
                case 3: return NSNumber(value: Double(bitPattern: bits))
                default: return nil
                }
            case 0x3:  // date: seconds since 2001 as an 8-byte real
                guard marker == 0x33, let bits = unsigned(at: offset + 1, size: 8) else { return nil }
                let seconds = Double(bitPattern: bits)
                return seconds.isFinite ? Date(timeIntervalSinceReferenceDate: seconds) : nil
            case 0x4:  // data
                guard let (count, start) = length(at: offset), start <= bytes.count - count else { return nil }
                return Data(bytes[start..<start + count])
            case 0x5:  // ASCII string
                guard let (count, start) = length(at: offset), start <= bytes.count - count else { return nil }
                return String(decoding: bytes[start..<start + count], as: UTF8.self)
            case 0x6:  // UTF-16BE string, length in code units
                guard let (count, start) = length(at: offset), count <= bytes.count / 2,
                      start <= bytes.count - 2 * count else { return nil }
                let units = (0..<count).map { UInt16(bytes[start + 2 * $0]) << 8 | UInt16(bytes[start + 2 * $0 + 1]) }
                return String(decoding: units, as: UTF16.self)
            case 0x8:  // UID of nibble + 1 bytes
                guard let value = unsigned(at: offset + 1, size: nibble + 1), value <= UInt64(Int32.max) else { return nil }
                return KeyedArchive.UID(index: Int(value))
            case 0xA, 0xC:  // array, set (read as an array)
                return array(at: offset, depth: depth)
            case 0xD:  // dictionary: all key references, then all value references
                return dictionary(at: offset, depth: depth)
            default:
                return nil
            }
        }

        private mutating func array(at offset: Int, depth: Int) -> [Any]? {
            guard let (count, start) = length(at: offset),
                  count <= bytes.count / referenceSize, start <= bytes.count - count * referenceSize else { return nil }
            var array: [Any] = []
            for index in 0..<count {
                guard let child = unsigned(at: start + index * referenceSize, size: referenceSize),
                      let value = object(Int(clamping: child), depth: depth + 1) else { return nil }
                array.append(value)
            }
            return array
        }

        private mutating func dictionary(at offset: Int, depth: Int) -> [String: Any]? {
            guard let (count, start) = length(at: offset),
                  count <= bytes.count / (2 * referenceSize), start <= bytes.count - 2 * count * referenceSize
            else { return nil }
            var dictionary: [String: Any] = [:]
            for index in 0..<count {
                guard let keyReference = unsigned(at: start + index * referenceSize, size: referenceSize),
                      let valueReference = unsigned(at: start + (count + index) * referenceSize, size: referenceSize),
                      let key = object(Int(clamping: keyReference), depth: depth + 1) as? String,
                      let value = object(Int(clamping: valueReference), depth: depth + 1) else { return nil }
                dictionary[key] = value
            }
            return dictionary
        }
    }
}
