import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabKit
import LabVocabulary
import Testing

/// Blobs of each documented form, built here by hand (PropertyListSerialization, NSKeyedArchiver,
/// XML text), never with `ResumeData.encoded(as:)`, so that the decoder is checked against the
/// formats themselves rather than against its own encoder.
enum ResumeBlob {
    static let url = "http://127.0.0.1:8080/fixtures/sample-64MiB.bin"
    static let tag = "\"5534b35d-4000000\""
    static let date = "Mon, 01 Jan 2024 00:00:00 GMT"
    static let rootKey = "NSKeyedArchiveRootObjectKey"

    /// An NSURLRequest keyed archive in Apple's layout, as an iPhone writes it: class
    /// NSURLRequest, numbered `__nsurlrequest_proto_prop_obj_N` properties, one an NSURL, one the
    /// header dictionary. Written as XML text, so the references are `CF$UID` dictionaries.
    static func appleRequestArchive(url: String, headers: [(String, String)]) -> Data {
        func uid(_ index: Int) -> String { "<dict><key>CF$UID</key><integer>\(index)</integer></dict>" }
        func string(_ text: String) -> String {
            "<string>" + text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;") + "</string>"
        }
        let keysStart = 8
        let valuesStart = keysStart + headers.count
        let dictionaryClass = valuesStart + headers.count
        let requestClass = dictionaryClass + 1
        var objects = [
            string("$null"),
            """
            <dict><key>$class</key>\(uid(requestClass))<key>$0</key><integer>2</integer><key>$1</key><integer>3</integer>\
            <key>__nsurlrequest_proto_prop_obj_0</key>\(uid(2))<key>__nsurlrequest_proto_prop_obj_1</key>\(uid(3))\
            <key>__nsurlrequest_proto_prop_obj_2</key>\(uid(6))<key>__nsurlrequest_proto_props</key>\(uid(0))\
            <key>startTimeoutTime</key><real>0.0</real></dict>
            """,
            "<real>60</real>",
            "<dict><key>$class</key>\(uid(5))<key>NS.base</key>\(uid(0))<key>NS.relative</key>\(uid(4))</dict>",
            string(url),
            "<dict><key>$classname</key><string>NSURL</string><key>$classes</key><array><string>NSURL</string><string>NSObject</string></array></dict>",
            "<dict><key>$class</key>\(uid(dictionaryClass))<key>NS.keys</key><array>"
                + headers.indices.map { uid(keysStart + $0) }.joined()
                + "</array><key>NS.objects</key><array>"
                + headers.indices.map { uid(valuesStart + $0) }.joined() + "</array></dict>",
            "<string>GET</string>",
        ]
        objects += headers.map { string($0.0) } + headers.map { string($0.1) }
        objects.append("""
            <dict><key>$classname</key><string>NSMutableDictionary</string><key>$classes</key><array>\
            <string>NSMutableDictionary</string><string>NSDictionary</string><string>NSObject</string></array></dict>
            """)
        objects.append("""
            <dict><key>$classname</key><string>NSURLRequest</string><key>$classes</key><array>\
            <string>NSURLRequest</string><string>NSObject</string></array></dict>
            """)
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0"><dict>
            <key>$archiver</key><string>NSKeyedArchiver</string>
            <key>$objects</key><array>\(objects.joined(separator: "\n"))</array>
            <key>$top</key><dict><key>\(rootKey)</key>\(uid(1))</dict>
            <key>$version</key><integer>100000</integer>
            </dict></plist>
            """
        return Data(xml.utf8)
    }

    /// An NSURLRequest keyed-archived by this platform's Foundation (on Linux: corelibs' layout).
    static func foundationRequestArchive(url: String, range: String?) throws -> Data {
        var request = URLRequest(url: try #require(URL(string: url)))
        if let range { request.setValue(range, forHTTPHeaderField: "Range") }
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(request as NSURLRequest, forKey: rootKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }

    /// iOS 7/8: XML plist, version 1, the full path of the temp file.
    static func version1() -> Data {
        let dictionary: [String: Any] = [
            "NSURLSessionDownloadURL": url,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 1_048_576),
            "NSURLSessionResumeEntityTag": tag,
            "NSURLSessionResumeServerDownloadDate": date,
            "NSURLSessionResumeInfoLocalPath":
                "/private/var/mobile/Containers/Data/Application/0C4B/tmp/CFNetworkDownload_v1AbCd.tmp",
            "NSURLSessionResumeInfoVersion": NSNumber(value: 1),
            "NSURLSessionResumeOriginalRequest": appleRequestArchive(url: url, headers: [("Accept", "*/*")]),
            "NSURLSessionResumeCurrentRequest": appleRequestArchive(
                url: url, headers: [("Accept", "*/*"), ("Range", "bytes=1048576-")]),
        ]
        return try! PropertyListSerialization.data(fromPropertyList: dictionary, format: .xml, options: 0)
    }

    /// The same plist, rewritten in the binary format (as an iPhone writes its request archives).
    static func binaryCopy(_ data: Data) -> Data {
        plist(try! PropertyListSerialization.propertyList(from: data, format: nil), binary: true)
    }

    /// iOS 9–11: plist, version 2, the temp file's name only. `binary` as well as XML, since a
    /// blob may have passed through any plist writer.
    static func version2(binary: Bool = false) -> Data {
        func request(_ headers: [(String, String)]) -> Data {
            let xml = appleRequestArchive(url: url, headers: headers)
            return binary ? binaryCopy(xml) : xml
        }
        let dictionary: [String: Any] = [
            "NSURLSessionDownloadURL": url,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 26_843_545),
            "NSURLSessionResumeServerDownloadDate": date,
            "NSURLSessionResumeInfoTempFileName": "CFNetworkDownload_v2EfGh.tmp",
            "NSURLSessionResumeInfoVersion": NSNumber(value: 2),
            "NSURLSessionResumeOriginalRequest": request([]),
            // Header names are case-insensitive.
            "NSURLSessionResumeCurrentRequest": request([("range", "bytes=26843545-")]),
        ]
        return try! PropertyListSerialization.data(fromPropertyList: dictionary, format: binary ? .binary : .xml,
                                                   options: 0)
    }

    /// iOS 12 and later: the version-2 dictionary wrapped by NSKeyedArchiver.
    static func keyedArchive(topKey: String = rootKey) throws -> Data {
        let dictionary: NSDictionary = [
            "NSURLSessionDownloadURL": url,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 3_000_000_000 as Int64),
            "NSURLSessionResumeEntityTag": tag,
            "NSURLSessionResumeServerDownloadDate": date,
            "NSURLSessionResumeInfoTempFileName": "CFNetworkDownload_k12IjKl.tmp",
            "NSURLSessionResumeInfoVersion": NSNumber(value: 2),
            "NSURLSessionResumeOriginalRequest": try foundationRequestArchive(url: url, range: nil),
            "NSURLSessionResumeCurrentRequest": try foundationRequestArchive(url: url, range: "bytes=3000000000-"),
        ]
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(dictionary, forKey: topKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }

    static func plist(_ value: Any, binary: Bool = false) -> Data {
        try! PropertyListSerialization.data(fromPropertyList: value, format: binary ? .binary : .xml, options: 0)
    }

    static func archive(_ object: Any) -> Data {
        try! NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: false)
    }
}

/// A seeded generator, so a failing fuzz case can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
