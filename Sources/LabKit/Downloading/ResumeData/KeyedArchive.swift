import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary

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

    /// The URL, the Range header and the header fields of a keyed-archived NSURLRequest, in
    /// Apple's layout or corelibs'; nil when `data` is not a keyed archive.
    static func request(in data: Data) -> (url: String?, range: String?, headers: [String: String])? {
        guard let plist = PropertyList.parse(data) as? [String: Any],
              plist["$archiver"] as? String == "NSKeyedArchiver",
              let archive = try? KeyedArchive(plist) else { return nil }
        let headers = archive.requestHeaders()
        // Names are case-insensitive: of several spellings, the first in sorted order, every time.
        let range = headers.filter { $0.key.caseInsensitiveCompare("Range") == .orderedSame }.min { $0.key < $1.key }?.value
        return (archive.requestURL(), range, headers)
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

    /// The string-to-string entries of every archived dictionary, taken as the header fields: in
    /// a request archive, Apple's or corelibs', the header fields are the only such dictionary.
    /// The first value of a name wins.
    private func requestHeaders() -> [String: String] {
        var headers: [String: String] = [:]
        for object in objects {
            guard let entries = dictionaryEntries(object) else { continue }
            for (keyReference, valueReference) in entries {
                guard let key = entry(keyReference).flatMap({ string($0, depth: 0) }),
                      let value = entry(valueReference).flatMap({ string($0, depth: 0) }),
                      headers[key] == nil else { continue }
                headers[key] = value
            }
        }
        return headers
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
