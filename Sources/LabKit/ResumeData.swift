import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Apple-format *resume data*: the blob `URLSessionDownloadTask.cancel(byProducingResumeData:)`
/// hands back on iOS, and `URLSession.downloadTask(withResumeData:)` resumes from.
///
/// Apple calls it opaque, but it is a property list holding one dictionary, in one of three forms:
///
/// | ``Form``              | iOS         | what the data is                                             |
/// |-----------------------|-------------|--------------------------------------------------------------|
/// | `.propertyListV1`     | 7 and 8     | a plain (XML) plist; `NSURLSessionResumeInfoVersion` 1;      |
/// |                       |             | the partial file as a full path, `NSURLSessionResumeInfoLocalPath` |
/// | `.propertyListV2`     | 9 to 11     | a plain (XML) plist; version 2; the file name only,          |
/// |                       |             | `NSURLSessionResumeInfoTempFileName` (in the app's `tmp`)    |
/// | `.keyedArchive`       | 12 and later| the same dictionary wrapped by `NSKeyedArchiver` (a binary plist |
/// |                       |             | with `$archiver`, `$objects`, `$top`); version 2             |
///
/// Every form also has `NSURLSessionDownloadURL`, `NSURLSessionResumeBytesReceived`, usually the
/// validator the server gave (`NSURLSessionResumeEntityTag` and/or
/// `NSURLSessionResumeServerDownloadDate`, the Last-Modified), and two nested keyed archives of
/// `NSURLRequest`: `NSURLSessionResumeOriginalRequest` and `NSURLSessionResumeCurrentRequest`.
/// The keyed archives written by CFNetwork name their root `NSKeyedArchiveRootObjectKey` in
/// `$top` (the literal string, where `NSKeyedArchiver` itself writes `root`); both are read.
///
/// ## Decoding contract
/// ``decode(_:)`` accepts all three forms and reports which one it saw. Required:
/// `NSURLSessionDownloadURL` (a non-empty string) and `NSURLSessionResumeBytesReceived` (a whole
/// number ≥ 0). Optional strings must be strings when present; `NSURLSessionResumeServerDownloadDate`
/// may also be a date (then shown as an HTTP date); `NSURLSessionResumeInfoTempFileName` must be a
/// plain file name (no `/`, not `.` or `..`), so that `tempFileName` is safe to append to a folder.
/// A missing `NSURLSessionResumeInfoVersion` is taken as 2 when there is a temp file name and as 1
/// otherwise. A plain plist whose version is 1 is `.propertyListV1`; any higher version (macOS has
/// written 4) is `.propertyListV2`. Anything else throws ``ResumeDataError`` with a one-line
/// description; no input makes it crash.
///
/// `originalRequestURL` and `currentRequestRange` are read best-effort from the nested request
/// archives and are nil when those are missing or unreadable; they never make decoding fail.
///
/// ## What works on Linux (swift-corelibs-foundation), and what was chosen
/// - `PropertyListSerialization` reads and writes XML and binary plists. It also accepts old
///   OpenStep text, so that `hello` or `bplist00garbage` "parse" as a string: iOS never writes
///   OpenStep, so such input is reported as "not a property list".
/// - `NSKeyedArchiver` writes the iOS 12 wrapper (a dictionary of strings, numbers and data) fine.
/// - `NSKeyedUnarchiver` is *not* used for reading. With secure coding, meeting a class outside the
///   allowed list ends the process with `fatalError("Value was of unexpected class …")` instead
///   of throwing; unarchiving a Linux-archived `NSURLRequest` with `ofClasses: [NSURLRequest.self]`
///   crashes that way, because its `init(coder:)` then meets an `NSURL`. Without secure coding it
///   instantiates whatever class the file names. Neither is acceptable for a file a student hands
///   in, so decoding walks the archive's `$objects` table itself and never instantiates a class.
/// - `NSURLRequest` *can* be keyed-archived on Linux, but in corelibs' own layout (class
///   `FoundationNetworking.NSMutableURLRequest`, keys `NS.url`, `NS._allHTTPHeaderFields`, …).
///   Apple's layout is class `NSURLRequest` with numbered `__nsurlrequest_proto_prop_obj_N` (or
///   `$N`) keys, one of them an `NSURL`, another the header `NSMutableDictionary`. The reader
///   understands both by looking for the `NSURL` object and for a dictionary with a `Range` key.
///   ``encoded(as:)`` writes corelibs-layout request archives: good for this lab, but a real
///   iPhone could not unarchive them, so do not feed a blob made here to a device.
public struct ResumeData: Equatable, Sendable {
    public enum Form: String, Sendable, CaseIterable, CustomStringConvertible {
        case propertyListV1, propertyListV2, keyedArchive

        /// For people: `keyed archive (iOS 12 and later)`.
        public var description: String {
            switch self {
            case .propertyListV1: "property list, version 1 (iOS 7 and 8)"
            case .propertyListV2: "property list, version 2 (iOS 9 to 11)"
            case .keyedArchive: "keyed archive (iOS 12 and later)"
            }
        }
    }

    /// `NSURLSessionDownloadURL`.
    public var downloadURL: String
    /// `NSURLSessionResumeBytesReceived`: how many bytes the partial file holds.
    public var bytesReceived: Int64
    /// `NSURLSessionResumeEntityTag`, quotes included, e.g. `"abc"`.
    public var entityTag: String?
    /// `NSURLSessionResumeServerDownloadDate`: the Last-Modified the server sent.
    public var serverDownloadDate: String?
    /// `NSURLSessionResumeInfoTempFileName` (v2), or the last path component of
    /// `NSURLSessionResumeInfoLocalPath` (v1).
    public var tempFileName: String?
    /// `NSURLSessionResumeInfoLocalPath` (v1 only).
    public var localPath: String?
    /// `NSURLSessionResumeInfoVersion`.
    public var infoVersion: Int
    /// The URL of `NSURLSessionResumeOriginalRequest`, where it can be decoded.
    public var originalRequestURL: String?
    /// The Range header of `NSURLSessionResumeCurrentRequest`, where it can be decoded.
    public var currentRequestRange: String?

    /// A download of `downloadURL` stopped after `bytesReceived` bytes.
    ///
    /// The request fields are filled in as ``encoded(as:)`` will write them: the original request
    /// asks for `downloadURL`, the current one adds `Range: bytes=<bytesReceived>-`. So
    /// `decode(encoded(as: .keyedArchive))` gives back an equal value (if you change
    /// `bytesReceived` later, update `currentRequestRange` too, or set it to nil).
    public init(downloadURL: String, bytesReceived: Int64, entityTag: String?, serverDownloadDate: String?,
                tempFileName: String?, infoVersion: Int = 2) {
        self.downloadURL = downloadURL
        self.bytesReceived = bytesReceived
        self.entityTag = entityTag
        self.serverDownloadDate = serverDownloadDate
        self.tempFileName = tempFileName
        self.localPath = nil
        self.infoVersion = infoVersion
        self.originalRequestURL = downloadURL
        self.currentRequestRange = rangeHeader(from: bytesReceived)
    }

    /// Encodes in `form` (lesson 05 writes `.keyedArchive`, like iOS 12+). Include original and
    /// current request data if feasible.
    ///
    /// - `.propertyListV1`: XML plist, version 1, `NSURLSessionResumeInfoLocalPath` = `localPath`,
    ///   or else `tempFileName` inside `NSTemporaryDirectory()`.
    /// - `.propertyListV2`: XML plist, version `infoVersion` (at least 2), `NSURLSessionResumeInfoTempFileName`
    ///   = `tempFileName`, or else the last path component of `localPath`.
    /// - `.keyedArchive`: as `.propertyListV2`, wrapped by `NSKeyedArchiver` (binary plist).
    ///
    /// `NSURLSessionResumeOriginalRequest` is written when `originalRequestURL` is set;
    /// `NSURLSessionResumeCurrentRequest` (for `downloadURL`, with `currentRequestRange` as its
    /// Range header when set) always; both only where the URL parses. Nil optionals are left out.
    /// Throws what ``decode(_:)`` would reject: an empty `downloadURL`, a negative `bytesReceived`,
    /// an `infoVersion` below 1, a `tempFileName` that is not a plain file name.
    public func encoded(as form: Form) throws -> Data {
        guard !downloadURL.isEmpty else { throw ResumeDataError("cannot encode resume data with an empty download URL") }
        guard bytesReceived >= 0 else {
            throw ResumeDataError("cannot encode resume data with a negative byte count (\(bytesReceived))")
        }
        guard infoVersion >= 1, infoVersion <= Int(Int32.max) else {
            throw ResumeDataError("cannot encode resume data with version \(infoVersion)")
        }
        if let name = tempFileName, !Self.isPlainFileName(name) {
            throw ResumeDataError("cannot encode resume data with temp file name \(name.debugDescription)")
        }
        var dictionary: [String: Any] = [
            Key.downloadURL: downloadURL,
            Key.bytesReceived: NSNumber(value: bytesReceived),
        ]
        dictionary[Key.entityTag] = entityTag
        dictionary[Key.serverDownloadDate] = serverDownloadDate
        switch form {
        case .propertyListV1:
            dictionary[Key.infoVersion] = NSNumber(value: 1)
            dictionary[Key.localPath] = localPath
                ?? tempFileName.map { URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent($0).path }
        case .propertyListV2, .keyedArchive:
            dictionary[Key.infoVersion] = NSNumber(value: max(infoVersion, 2))
            dictionary[Key.tempFileName] = tempFileName ?? localPath.map { URL(fileURLWithPath: $0).lastPathComponent }
        }
        if let originalRequestURL {
            dictionary[Key.originalRequest] = Self.archivedRequest(url: originalRequestURL, range: nil)
        }
        dictionary[Key.currentRequest] = Self.archivedRequest(url: downloadURL, range: currentRequestRange)

        switch form {
        case .propertyListV1, .propertyListV2:
            // iOS 7 to 11 wrote XML; it is also what a student can read in a text editor.
            return try PropertyListSerialization.data(fromPropertyList: dictionary, format: .xml, options: 0)
        case .keyedArchive:
            let archiver = NSKeyedArchiver(requiringSecureCoding: true)
            archiver.encode(dictionary as NSDictionary, forKey: KeyedArchive.cfNetworkRootKey)
            archiver.finishEncoding()
            return archiver.encodedData
        }
    }

    /// Decodes any of the three forms. Throws `ResumeDataError` with a one-line, human description.
    public static func decode(_ data: Data) throws -> (resumeData: ResumeData, form: Form) {
        guard !data.isEmpty else { throw ResumeDataError("not a property list: the data is empty") }
        guard let plist = PropertyList.parse(data) else { throw ResumeDataError("not a property list") }
        guard let dictionary = plist as? [String: Any] else {
            throw ResumeDataError("a property list, but not resume data: the top level is \(PropertyList.kind(of: plist)), not a dictionary")
        }
        if dictionary["$archiver"] as? String == "NSKeyedArchiver" {
            let archive = try KeyedArchive(dictionary)
            let root = try archive.rootDictionary()
            return (try ResumeData(fields: root, context: "a keyed archive"), .keyedArchive)
        }
        let resumeData = try ResumeData(fields: dictionary, context: "a property list")
        return (resumeData, resumeData.infoVersion == 1 ? .propertyListV1 : .propertyListV2)
    }
}

/// Why data is not resume data, in one line (e.g. `NSURLSessionResumeBytesReceived is not a number`).
public struct ResumeDataError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        // One line, whatever a hostile file put into a class name.
        self.description = String(description.map { $0.isNewline || $0 == "\t" ? " " : $0 })
    }
}

// MARK: - Keys

extension ResumeData {
    enum Key {
        static let downloadURL = "NSURLSessionDownloadURL"
        static let bytesReceived = "NSURLSessionResumeBytesReceived"
        static let entityTag = "NSURLSessionResumeEntityTag"
        static let serverDownloadDate = "NSURLSessionResumeServerDownloadDate"
        static let localPath = "NSURLSessionResumeInfoLocalPath"
        static let tempFileName = "NSURLSessionResumeInfoTempFileName"
        static let infoVersion = "NSURLSessionResumeInfoVersion"
        static let originalRequest = "NSURLSessionResumeOriginalRequest"
        static let currentRequest = "NSURLSessionResumeCurrentRequest"
    }
}

// MARK: - Reading the dictionary

extension ResumeData {
    /// Validates the resume dictionary; `context` names what held it ("a property list").
    init(fields: [String: Any], context: String) throws {
        func string(_ key: String) throws -> String? {
            guard let value = fields[key] else { return nil }
            guard let text = value as? String else { throw ResumeDataError("\(key) is not a string") }
            return text
        }
        func wholeNumber(_ key: String) throws -> Int64? {
            guard let value = fields[key] else { return nil }
            // A plist <true/> must not pass for the number 1.
            guard !PropertyList.isBoolean(value), let number = value as? NSNumber else {
                throw ResumeDataError("\(key) is not a number")
            }
            guard let whole = value as? Int64 else {
                let double = number.doubleValue
                throw ResumeDataError(double.rounded() == double ? "\(key) is out of range (\(number))"
                                                                  : "\(key) is not a whole number (\(number))")
            }
            return whole
        }

        guard let url = try string(Key.downloadURL) else {
            throw ResumeDataError("\(context), but not resume data: no \(Key.downloadURL)")
        }
        guard !url.isEmpty else { throw ResumeDataError("\(Key.downloadURL) is empty") }
        guard let received = try wholeNumber(Key.bytesReceived) else {
            throw ResumeDataError("\(context), but not resume data: no \(Key.bytesReceived)")
        }
        guard received >= 0 else { throw ResumeDataError("\(Key.bytesReceived) is negative (\(received))") }

        let localPath = try string(Key.localPath)
        // The name is taken as a file inside a folder the resuming code picks, whichever key gave
        // it: no way out of that folder (`/x/..` would name the folder's parent).
        let tempFileName: String?
        if let name = try string(Key.tempFileName) {
            guard Self.isPlainFileName(name) else {
                throw ResumeDataError("\(Key.tempFileName) is not a plain file name (\(name.debugDescription))")
            }
            tempFileName = name
        } else if let localPath {
            let name = (localPath as NSString).lastPathComponent
            guard Self.isPlainFileName(name) else {
                throw ResumeDataError("\(Key.localPath) does not end in a plain file name (\(localPath.debugDescription))")
            }
            tempFileName = name
        } else {
            tempFileName = nil
        }
        let version = try wholeNumber(Key.infoVersion) ?? (fields[Key.tempFileName] != nil ? 2 : 1)
        guard version >= 1, version <= Int64(Int32.max) else {
            throw ResumeDataError("\(Key.infoVersion) is \(version), not a version number")
        }

        var serverDate: String?
        switch fields[Key.serverDownloadDate] {
        case nil: serverDate = nil
        case let text as String: serverDate = text
        case let date as Date: serverDate = Self.httpDate(date)
        default: throw ResumeDataError("\(Key.serverDownloadDate) is not a string")
        }

        self.init(downloadURL: url, bytesReceived: received, entityTag: try string(Key.entityTag),
                  serverDownloadDate: serverDate, tempFileName: tempFileName, infoVersion: Int(version))
        self.localPath = localPath
        // Best effort: an unreadable request archive leaves the field nil, it never fails decoding.
        originalRequestURL = (fields[Key.originalRequest] as? Data).flatMap { KeyedArchive.request(in: $0)?.url }
        currentRequestRange = (fields[Key.currentRequest] as? Data).flatMap { KeyedArchive.request(in: $0)?.range }
    }

    /// Not empty, `.` or `..`; no `/` or NUL.
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0")
    }

    /// IMF-fixdate, e.g. `Mon, 01 Jan 2024 00:00:00 GMT`.
    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// A keyed archive of a GET request for `url`, or nil when `url` does not parse.
    static func archivedRequest(url: String, range: String?) -> Data? {
        guard let url = URL(string: url) else { return nil }
        var request = URLRequest(url: url)
        if let range { request.setValue(range, forHTTPHeaderField: "Range") }
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(request as NSURLRequest, forKey: KeyedArchive.cfNetworkRootKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }
}

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
                guard let (count, start) = length(at: offset),
                      count <= bytes.count / referenceSize, start <= bytes.count - count * referenceSize else { return nil }
                var array: [Any] = []
                for index in 0..<count {
                    guard let child = unsigned(at: start + index * referenceSize, size: referenceSize),
                          let value = object(Int(clamping: child), depth: depth + 1) else { return nil }
                    array.append(value)
                }
                return array
            case 0xD:  // dictionary: all key references, then all value references
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
            default:
                return nil
            }
        }
    }
}

// MARK: - Keyed archives, read without NSKeyedUnarchiver

/// An `NSKeyedArchiver` property list, walked by hand: `$objects` is a table of plain values and
/// of object dictionaries whose references (UIDs) point back into the table. Nothing here
/// instantiates a class named by the file (see ``ResumeData``'s notes on Linux), and every
/// reference is bounds-checked and depth-limited, so damaged or hostile archives only fail.
struct KeyedArchive {
    /// The `$top` key CFNetwork uses; `NSKeyedArchiver.archivedData(withRootObject:…)` writes "root".
    static let cfNetworkRootKey = "NSKeyedArchiveRootObjectKey"
    private static let maximumDepth = 16

    /// A reference into `$objects`, as ``BinaryPropertyList`` returns it.
    struct UID {
        let index: Int
    }

    /// An archived object that is not one of the plain plist types.
    struct Object {
        let className: String
    }

    let objects: [Any]
    let top: [String: Any]

    init(_ plist: [String: Any]) throws {
        guard let objects = plist["$objects"] as? [Any] else {
            throw ResumeDataError("a keyed archive, but a damaged one: no $objects table")
        }
        guard let top = plist["$top"] as? [String: Any] else {
            throw ResumeDataError("a keyed archive, but a damaged one: no $top")
        }
        self.objects = objects
        self.top = top
    }

    /// The table entry a UID points at; nil when `value` is not a UID or points outside the table.
    private func entry(_ value: Any) -> Any? {
        guard let index = Self.uid(value), objects.indices.contains(index) else { return nil }
        return objects[index]
    }

    /// The root object's table entry.
    private func rootEntry() -> Any? {
        for key in [Self.cfNetworkRootKey, "root"] {
            if let reference = top[key] { return entry(reference) }
        }
        return nil
    }

    /// The root, which must be an archived NSDictionary, as a Swift dictionary of plain values.
    func rootDictionary() throws -> [String: Any] {
        guard top[Self.cfNetworkRootKey] != nil || top["root"] != nil else {
            throw ResumeDataError("a keyed archive, but a damaged one: no root object in $top")
        }
        guard let root = rootEntry() else {
            throw ResumeDataError("a keyed archive, but a damaged one: the root reference points nowhere")
        }
        if let object = root as? [String: Any] {
            guard let className = className(of: object) else {
                throw ResumeDataError("a keyed archive, but a damaged one: the root object has no class")
            }
            guard className.hasSuffix("Dictionary") else {
                throw ResumeDataError("a keyed archive, but not resume data: the root object is \(className.prefix(80)), not a dictionary")
            }
        } else {
            let what = value(root, depth: 0).map(PropertyList.kind(of:)) ?? "nothing ($null)"
            throw ResumeDataError("a keyed archive, but not resume data: the root object is \(what), not a dictionary")
        }
        guard let entries = dictionaryEntries(root) else {
            throw ResumeDataError("a keyed archive, but a damaged one: the root dictionary's keys and values do not pair up")
        }
        var result: [String: Any] = [:]
        for (keyReference, valueReference) in entries {
            guard let keyEntry = entry(keyReference), let key = string(keyEntry, depth: 0) else {
                throw ResumeDataError("a keyed archive, but a damaged one: a dictionary key is not a string")
            }
            guard let valueEntry = entry(valueReference) else {
                throw ResumeDataError("a keyed archive, but a damaged one: the value of \(key) points nowhere")
            }
            if let value = value(valueEntry, depth: 0) { result[key] = value }
        }
        return result
    }

    // MARK: Values

    /// A table entry as a plain value (String, NSNumber, Bool, Data, Date), an ``Object`` for
    /// other classes, or nil for `$null`.
    private func value(_ entry: Any, depth: Int) -> Any? {
        if let text = entry as? String { return text == "$null" ? nil : text }
        guard let object = entry as? [String: Any], let className = className(of: object) else { return entry }
        switch className {
        case "NSString", "NSMutableString": return string(entry, depth: depth) ?? Object(className: className)
        case "NSData", "NSMutableData": return data(object) ?? Object(className: className)
        case "NSDate":
            guard let time = object["NS.time"], !PropertyList.isBoolean(time), let seconds = time as? NSNumber else {
                return Object(className: className)
            }
            return Date(timeIntervalSinceReferenceDate: seconds.doubleValue)
        default: return Object(className: className)
        }
    }

    /// A plain string, or an archived NSString / NSMutableString.
    private func string(_ entry: Any, depth: Int) -> String? {
        if let text = entry as? String { return text == "$null" ? nil : text }
        guard depth < Self.maximumDepth, let object = entry as? [String: Any],
              let className = className(of: object), className == "NSString" || className == "NSMutableString",
              let inner = object["NS.string"] else { return nil }
        if let text = inner as? String { return text }
        return self.entry(inner).flatMap { string($0, depth: depth + 1) }
    }

    /// An archived NSData / NSMutableData: its bytes inline, or one reference away.
    private func data(_ object: [String: Any]) -> Data? {
        guard let inner = object["NS.data"] else { return nil }
        return inner as? Data ?? entry(inner) as? Data
    }

    private func className(of object: [String: Any]) -> String? {
        guard let reference = object["$class"], let classInfo = entry(reference) as? [String: Any] else { return nil }
        return classInfo["$classname"] as? String
    }

    /// The key and value references of an archived NSDictionary / NSMutableDictionary.
    private func dictionaryEntries(_ entry: Any) -> [(Any, Any)]? {
        guard let object = entry as? [String: Any], let className = className(of: object),
              className.hasSuffix("Dictionary"),
              let keys = object["NS.keys"] as? [Any], let values = object["NS.objects"] as? [Any],
              keys.count == values.count else { return nil }
        return Array(zip(keys, values))
    }

    /// An archived NSURL as a string, relative URLs resolved against their base.
    private func urlString(_ entry: Any, depth: Int) -> String? {
        guard depth < Self.maximumDepth, let object = entry as? [String: Any], className(of: object) == "NSURL",
              let relative = object["NS.relative"].flatMap({ self.entry($0) }).flatMap({ string($0, depth: depth + 1) })
        else { return nil }
        guard let baseEntry = object["NS.base"].flatMap({ self.entry($0) }),
              let base = urlString(baseEntry, depth: depth + 1), let baseURL = URL(string: base) else { return relative }
        return URL(string: relative, relativeTo: baseURL)?.absoluteString ?? relative
    }

    // MARK: Requests

    /// The URL and Range header of a keyed-archived NSURLRequest, in Apple's layout or corelibs';
    /// nil when `data` is not a keyed archive.
    static func request(in data: Data) -> (url: String?, range: String?)? {
        guard let plist = PropertyList.parse(data) as? [String: Any],
              plist["$archiver"] as? String == "NSKeyedArchiver",
              let archive = try? KeyedArchive(plist) else { return nil }
        return (archive.requestURL(), archive.requestRange())
    }

    /// corelibs keeps the URL under `NS.url`; Apple's numbered properties hold exactly one NSURL
    /// for a download (no main document URL), so the first NSURL in the table is it.
    private func requestURL() -> String? {
        if let root = rootEntry() as? [String: Any], let reference = root["NS.url"],
           let url = entry(reference).flatMap({ urlString($0, depth: 0) }) {
            return url
        }
        for object in objects {
            if let url = urlString(object, depth: 0) { return url }
        }
        return nil
    }

    /// The value of a `Range` key in any archived dictionary: the request's header fields.
    private func requestRange() -> String? {
        for object in objects {
            guard let entries = dictionaryEntries(object) else { continue }
            for (keyReference, valueReference) in entries {
                guard let key = entry(keyReference).flatMap({ string($0, depth: 0) }),
                      key.caseInsensitiveCompare("Range") == .orderedSame else { continue }
                return entry(valueReference).flatMap { string($0, depth: 0) }
            }
        }
        return nil
    }

    // MARK: UIDs

    /// The index a UID holds: a ``UID`` from ``BinaryPropertyList``; or, from an XML archive read
    /// by `PropertyListSerialization`, an opaque object: corelibs' internal `_NSKeyedArchiverUID`,
    /// whose stored `value` Mirror can read, or Darwin's `CFKeyedArchiverUID`, whose description
    /// ends `{value = N}`; or a `{"CF$UID": N}` dictionary, the XML spelling, should it stay one.
    static func uid(_ value: Any) -> Int? {
        if let uid = value as? UID { return uid.index }
        if let dictionary = value as? [String: Any] {
            guard dictionary.count == 1, let value = dictionary["CF$UID"], !PropertyList.isBoolean(value),
                  let number = value as? NSNumber else { return nil }
            return number.intValue >= 0 ? number.intValue : nil
        }
        let mirror = Mirror(reflecting: value)
        if String(describing: mirror.subjectType).hasSuffix("KeyedArchiverUID") {
            for child in mirror.children where child.label == "value" {
                if let index = child.value as? UInt32 { return Int(index) }
            }
            return nil
        }
        let description = String(describing: value)
        guard description.contains("CFKeyedArchiverUID"), let start = description.range(of: "{value = "),
              let end = description[start.upperBound...].firstIndex(of: "}") else { return nil }
        return Int(description[start.upperBound..<end])
    }
}
