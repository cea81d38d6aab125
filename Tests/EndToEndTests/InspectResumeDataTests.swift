import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Testing

/// `lab inspect-resume-data FILE`, run as a child process on blobs built here by hand.
struct InspectResumeDataTests {
    static let url = "http://127.0.0.1:8080/fixtures/sample-64MiB.bin"
    static let date = "Mon, 01 Jan 2024 00:00:00 GMT"
    static let rootKey = "NSKeyedArchiveRootObjectKey"

    static func request(range: String?) throws -> Data {
        var request = URLRequest(url: try #require(URL(string: url)))
        if let range { request.setValue(range, forHTTPHeaderField: "Range") }
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(request as NSURLRequest, forKey: rootKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }

    /// Writes `data` to a fresh scratch folder; returns the file's path.
    static func write(_ data: Data, name: String = "resume.data") throws -> String {
        let file = try scratchDirectory().appendingPathComponent(name)
        try data.write(to: file)
        return file.path
    }

    static func plist(_ value: Any) throws -> Data {
        try PropertyListSerialization.data(fromPropertyList: value, format: .xml, options: 0)
    }

    static func inspect(_ arguments: [String]) throws -> ChildProcess.Finished {
        try ChildProcess.run("lab", ["inspect-resume-data"] + arguments, timeout: 60)
    }

    @Test func showsAVersion1PropertyList() throws {
        let path = try Self.write(Self.plist([
            "NSURLSessionDownloadURL": Self.url,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 1_048_576),
            "NSURLSessionResumeEntityTag": "\"abc\"",
            "NSURLSessionResumeServerDownloadDate": Self.date,
            "NSURLSessionResumeInfoLocalPath": "/private/var/mobile/Containers/Data/Application/0C4B/tmp/CFNetworkDownload_v1AbCd.tmp",
            "NSURLSessionResumeInfoVersion": NSNumber(value: 1),
            "NSURLSessionResumeOriginalRequest": try Self.request(range: nil),
            "NSURLSessionResumeCurrentRequest": try Self.request(range: "bytes=1048576-"),
        ] as [String: Any]))
        let finished = try Self.inspect([path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stderr.isEmpty)
        #expect(finished.stdout == """
            form            property list, version 1 (iOS 7 and 8)
            URL             http://127.0.0.1:8080/fixtures/sample-64MiB.bin
            bytes received  1,048,576
            validator       ETag "abc"
            server date     Mon, 01 Jan 2024 00:00:00 GMT
            temp file       CFNetworkDownload_v1AbCd.tmp
            local path      /private/var/mobile/Containers/Data/Application/0C4B/tmp/CFNetworkDownload_v1AbCd.tmp
            version         1
            original request http://127.0.0.1:8080/fixtures/sample-64MiB.bin
            current request Range: bytes=1048576-

            """)
    }

    @Test func showsAVersion2PropertyList() throws {
        // No ETag: the date is the validator. No request archives: no request lines.
        let path = try Self.write(Self.plist([
            "NSURLSessionDownloadURL": Self.url,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 26_843_545),
            "NSURLSessionResumeServerDownloadDate": Self.date,
            "NSURLSessionResumeInfoTempFileName": "CFNetworkDownload_v2EfGh.tmp",
            "NSURLSessionResumeInfoVersion": NSNumber(value: 2),
        ] as [String: Any]))
        let finished = try Self.inspect([path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stdout == """
            form            property list, version 2 (iOS 9 to 11)
            URL             http://127.0.0.1:8080/fixtures/sample-64MiB.bin
            bytes received  26,843,545
            validator       Last-Modified Mon, 01 Jan 2024 00:00:00 GMT
            server date     Mon, 01 Jan 2024 00:00:00 GMT
            temp file       CFNetworkDownload_v2EfGh.tmp
            version         2

            """)
    }

    static func keyedArchive() throws -> Data {
        let dictionary: NSDictionary = [
            "NSURLSessionDownloadURL": url,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 3_000_000_000 as Int64),
            "NSURLSessionResumeEntityTag": "\"abc\"",
            "NSURLSessionResumeServerDownloadDate": date,
            "NSURLSessionResumeInfoTempFileName": "CFNetworkDownload_k12IjKl.tmp",
            "NSURLSessionResumeInfoVersion": NSNumber(value: 2),
            "NSURLSessionResumeOriginalRequest": try request(range: nil),
            "NSURLSessionResumeCurrentRequest": try request(range: "bytes=3000000000-"),
        ]
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(dictionary, forKey: rootKey)
        archiver.finishEncoding()
        return archiver.encodedData
    }

    @Test func showsAKeyedArchive() throws {
        let path = try Self.write(try Self.keyedArchive())
        let finished = try Self.inspect([path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stdout == """
            form            keyed archive (iOS 12 and later)
            URL             http://127.0.0.1:8080/fixtures/sample-64MiB.bin
            bytes received  3,000,000,000
            validator       ETag "abc"
            server date     Mon, 01 Jan 2024 00:00:00 GMT
            temp file       CFNetworkDownload_k12IjKl.tmp
            version         2
            original request http://127.0.0.1:8080/fixtures/sample-64MiB.bin
            current request Range: bytes=3000000000-

            """)
    }

    @Test func showsMissingFieldsAsNone() throws {
        let path = try Self.write(Self.plist([
            "NSURLSessionDownloadURL": Self.url, "NSURLSessionResumeBytesReceived": NSNumber(value: 0),
            "NSURLSessionResumeInfoVersion": NSNumber(value: 2),
        ] as [String: Any]))
        let finished = try Self.inspect([path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stdout == """
            form            property list, version 2 (iOS 9 to 11)
            URL             http://127.0.0.1:8080/fixtures/sample-64MiB.bin
            bytes received  0
            validator       none
            server date     none
            temp file       none
            version         2

            """)
    }

    @Test func escapesControlCharacters() throws {
        let path = try Self.write(Self.plist([
            "NSURLSessionDownloadURL": "http://x/\u{1B}[2Jcleared\nsecond line", "NSURLSessionResumeBytesReceived": NSNumber(value: 7),
            "NSURLSessionResumeInfoVersion": NSNumber(value: 2),
        ] as [String: Any]))
        let finished = try Self.inspect([path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stdout.split(separator: "\n").dropFirst().first == #"URL             http://x/\u{1B}[2Jcleared\nsecond line"#)
    }

    /// A keyed archive names its classes itself: one named with an escape sequence is refused,
    /// and the refusal shows the name escaped, on one line.
    @Test func escapesControlCharactersInAClassName() throws {
        let archiver = NSKeyedArchiver(requiringSecureCoding: false)
        archiver.encode(NSArray(array: [NSNumber(value: 1)]), forKey: Self.rootKey)
        archiver.finishEncoding()
        // The class name, seven bytes in the binary plist, becomes seven others: ESC ] 0 ; o w BEL.
        var bytes = [UInt8](archiver.encodedData)
        let name = Array("NSArray".utf8), evil = Array("\u{1B}]0;ow\u{07}".utf8)
        var replaced = 0
        while let range = bytes.firstRange(of: name) {
            bytes.replaceSubrange(range, with: evil)
            replaced += 1
        }
        #expect(replaced > 0)
        let path = try Self.write(Data(bytes))
        let finished = try Self.inspect([path])
        #expect(finished.status == 65, "\(finished.stderr)")
        #expect(!finished.stderr.contains("\u{1B}"), "\(finished.stderr)")
        #expect(finished.stderr.contains(#"the root object is \u{1B}]0;ow\u{07}, not a dictionary"#), "\(finished.stderr)")
        #expect(finished.stderr.split(separator: "\n").count == 1)
    }

    @Test func printsJSONWhenAsked() throws {
        let path = try Self.write(try Self.keyedArchive())
        let finished = try Self.inspect(["--json", path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stdout.hasSuffix("}\n"))
        #expect(finished.stdout.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(finished.stdout.utf8)) as? [String: Any])
        #expect(object["form"] as? String == "keyedArchive")
        #expect(object["formDescription"] as? String == "keyed archive (iOS 12 and later)")
        #expect(object["url"] as? String == Self.url)
        #expect((object["bytesReceived"] as? NSNumber)?.int64Value == 3_000_000_000)
        #expect(object["entityTag"] as? String == "\"abc\"")
        #expect(object["serverDownloadDate"] as? String == Self.date)
        #expect(object["validator"] as? String == "ETag \"abc\"")
        #expect(object["tempFileName"] as? String == "CFNetworkDownload_k12IjKl.tmp")
        #expect(object["localPath"] is NSNull)
        #expect((object["infoVersion"] as? NSNumber)?.intValue == 2)
        #expect(object["originalRequestURL"] as? String == Self.url)
        #expect(object["currentRequestRange"] as? String == "bytes=3000000000-")
    }

    static func garbage() throws -> [(Data, String)] {
        [
            (Data([0x00, 0xFF, 0x13, 0x37, 0xC0, 0xDE]), "not a property list"),
            (Data(), "not a property list: the data is empty"),
            (try plist(["a", "b"]), "a property list, but not resume data: the top level is an array, not a dictionary"),
            (try plist(["Name": "Download Lab"]), "a property list, but not resume data: no NSURLSessionDownloadURL"),
            (try plist(["NSURLSessionDownloadURL": url, "NSURLSessionResumeBytesReceived": "lots"]),
             "NSURLSessionResumeBytesReceived is not a number"),
            (try NSKeyedArchiver.archivedData(withRootObject: ["a"] as NSArray, requiringSecureCoding: false),
             "a keyed archive, but not resume data: the root object is NSArray, not a dictionary"),
        ]
    }

    @Test func notResumeDataGetsOneLineAndExit65() throws {
        for (data, reason) in try Self.garbage() {
            let path = try Self.write(data)
            let finished = try Self.inspect([path])
            #expect(finished.status == 65, "\(reason)")
            #expect(finished.stderr == "lab inspect-resume-data: \(path): \(reason)\n")
            #expect(finished.stdout.isEmpty)
        }
    }

    @Test func anUnreadableFileGetsOneLineAndExit66() throws {
        let missing = try scratchDirectory().appendingPathComponent("nothing-here.data").path
        let finished = try Self.inspect([missing])
        #expect(finished.status == 66)
        #expect(finished.stderr == "lab inspect-resume-data: \(missing): no such file\n")
        #expect(finished.stdout.isEmpty)

        let directory = try scratchDirectory().path
        let onDirectory = try Self.inspect(["--json", directory])
        #expect(onDirectory.status == 66)
        #expect(onDirectory.stderr == "lab inspect-resume-data: \(directory): is a directory, not a file\n")
        #expect(onDirectory.stdout.isEmpty)
    }
}
