import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary

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
    /// The header fields of `NSURLSessionResumeOriginalRequest` (`Accept-Encoding: identity`, say),
    /// which a resumed task sends again, as Apple's does; empty where none can be decoded.
    public var originalRequestHeaders: [String: String] = [:]

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
    ///   or else `tempFileName` inside the folder the lab's download tasks keep their files in
    ///   (`LabFolders.temporary`, the app's tmp folder in iOS terms).
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
                ?? tempFileName.map { LabFolders.temporary.appendingPathComponent($0).path }
        case .propertyListV2, .keyedArchive:
            dictionary[Key.infoVersion] = NSNumber(value: max(infoVersion, 2))
            dictionary[Key.tempFileName] = tempFileName ?? localPath.map { URL(fileURLWithPath: $0).lastPathComponent }
        }
        if let originalRequestURL {
            dictionary[Key.originalRequest] = Self.archivedRequest(url: originalRequestURL, range: nil, headers: originalRequestHeaders)
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
