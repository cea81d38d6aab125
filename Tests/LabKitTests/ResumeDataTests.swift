import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabKit
import LabVocabulary
import Testing

struct ResumeDataTests {
    // MARK: The three documented forms

    @Test func decodesVersion1PropertyList() throws {
        let (decoded, form) = try ResumeData.decode(ResumeBlob.version1())
        #expect(form == .propertyListV1)
        #expect(decoded.downloadURL == ResumeBlob.url)
        #expect(decoded.bytesReceived == 1_048_576)
        #expect(decoded.entityTag == ResumeBlob.tag)
        #expect(decoded.serverDownloadDate == ResumeBlob.date)
        #expect(decoded.tempFileName == "CFNetworkDownload_v1AbCd.tmp")
        #expect(decoded.localPath == "/private/var/mobile/Containers/Data/Application/0C4B/tmp/CFNetworkDownload_v1AbCd.tmp")
        #expect(decoded.infoVersion == 1)
        #expect(decoded.originalRequestURL == ResumeBlob.url)
        #expect(decoded.currentRequestRange == "bytes=1048576-")
    }

    @Test(arguments: [false, true])
    func decodesVersion2PropertyList(binary: Bool) throws {
        let (decoded, form) = try ResumeData.decode(ResumeBlob.version2(binary: binary))
        #expect(form == .propertyListV2)
        #expect(decoded.downloadURL == ResumeBlob.url)
        #expect(decoded.bytesReceived == 26_843_545)
        #expect(decoded.entityTag == nil)
        #expect(decoded.serverDownloadDate == ResumeBlob.date)
        #expect(decoded.tempFileName == "CFNetworkDownload_v2EfGh.tmp")
        #expect(decoded.localPath == nil)
        #expect(decoded.infoVersion == 2)
        #expect(decoded.originalRequestURL == ResumeBlob.url)
        #expect(decoded.currentRequestRange == "bytes=26843545-")
    }

    @Test(arguments: [ResumeBlob.rootKey, "root"])
    func decodesKeyedArchive(topKey: String) throws {
        let (decoded, form) = try ResumeData.decode(try ResumeBlob.keyedArchive(topKey: topKey))
        #expect(form == .keyedArchive)
        #expect(decoded.downloadURL == ResumeBlob.url)
        #expect(decoded.bytesReceived == 3_000_000_000)
        #expect(decoded.entityTag == ResumeBlob.tag)
        #expect(decoded.serverDownloadDate == ResumeBlob.date)
        #expect(decoded.tempFileName == "CFNetworkDownload_k12IjKl.tmp")
        #expect(decoded.localPath == nil)
        #expect(decoded.infoVersion == 2)
        #expect(decoded.originalRequestURL == ResumeBlob.url)
        #expect(decoded.currentRequestRange == "bytes=3000000000-")
    }

    /// A resumed task sends the original request's fields again (`Accept-Encoding: identity`), as
    /// Apple's does: they travel in the archived original request.
    @Test(arguments: [ResumeData.Form.keyedArchive, .propertyListV2])
    func theOriginalRequestsFieldsSurviveARoundTrip(form: ResumeData.Form) throws {
        var blob = ResumeData(downloadURL: ResumeBlob.url, bytesReceived: 5, entityTag: ResumeBlob.tag, serverDownloadDate: nil,
                              tempFileName: "CFNetworkDownload_h.tmp")
        blob.originalRequestHeaders = ["Accept-Encoding": "identity", "X-Lab": "kept"]
        let (decoded, _) = try ResumeData.decode(try blob.encoded(as: form))
        #expect(decoded.originalRequestHeaders == blob.originalRequestHeaders)
        #expect(decoded == blob)
        #expect(try ResumeData.decode(try ResumeBlob.keyedArchive(topKey: ResumeBlob.rootKey)).0.originalRequestHeaders == [:])
    }

    @Test func requestsThatCannotBeDecodedLeaveTheirFieldsEmpty() throws {
        let blob = ResumeBlob.plist([
            "NSURLSessionDownloadURL": ResumeBlob.url,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 10),
            "NSURLSessionResumeInfoTempFileName": "CFNetworkDownload_x.tmp",
            "NSURLSessionResumeInfoVersion": NSNumber(value: 2),
            "NSURLSessionResumeOriginalRequest": Data("garbage".utf8),
            "NSURLSessionResumeCurrentRequest": ResumeBlob.archive(["no": "request"] as NSDictionary),
        ] as [String: Any])
        let (decoded, _) = try ResumeData.decode(blob)
        #expect(decoded.originalRequestURL == nil)
        #expect(decoded.currentRequestRange == nil)
        #expect(decoded.bytesReceived == 10)
    }

    @Test func aMissingVersionIsInferredAndADateIsShownAsAnHTTPDate() throws {
        let withName = ResumeBlob.plist([
            "NSURLSessionDownloadURL": ResumeBlob.url, "NSURLSessionResumeBytesReceived": NSNumber(value: 1),
            "NSURLSessionResumeInfoTempFileName": "CFNetworkDownload_x.tmp",
            "NSURLSessionResumeServerDownloadDate": Date(timeIntervalSince1970: 1_704_067_200),
        ] as [String: Any])
        let (v2, v2Form) = try ResumeData.decode(withName)
        #expect(v2Form == .propertyListV2)
        #expect(v2.infoVersion == 2)
        #expect(v2.serverDownloadDate == "Mon, 01 Jan 2024 00:00:00 GMT")

        let withPath = ResumeBlob.plist([
            "NSURLSessionDownloadURL": ResumeBlob.url, "NSURLSessionResumeBytesReceived": NSNumber(value: 1),
            "NSURLSessionResumeInfoLocalPath": "/tmp/CFNetworkDownload_y.tmp",
        ] as [String: Any])
        let (v1, v1Form) = try ResumeData.decode(withPath)
        #expect(v1Form == .propertyListV1)
        #expect(v1.infoVersion == 1)
        #expect(v1.tempFileName == "CFNetworkDownload_y.tmp")
    }

    // MARK: Round trips

    static let sample = ResumeData(
        downloadURL: ResumeBlob.url, bytesReceived: 26_843_545, entityTag: ResumeBlob.tag,
        serverDownloadDate: ResumeBlob.date, tempFileName: "CFNetworkDownload_Rt1234.tmp")

    @Test func initFillsTheRequestsAsTheyWillBeEncoded() {
        #expect(Self.sample.originalRequestURL == ResumeBlob.url)
        #expect(Self.sample.currentRequestRange == "bytes=26843545-")
        #expect(Self.sample.localPath == nil)
        #expect(Self.sample.infoVersion == 2)
    }

    @Test(arguments: ResumeData.Form.allCases)
    func roundTrips(form: ResumeData.Form) throws {
        let (decoded, decodedForm) = try ResumeData.decode(try Self.sample.encoded(as: form))
        #expect(decodedForm == form)
        var expected = Self.sample
        if form == .propertyListV1 {
            expected.infoVersion = 1
            expected.localPath = LabFolders.temporary.appendingPathComponent("CFNetworkDownload_Rt1234.tmp").path
        }
        #expect(decoded == expected)
    }

    @Test(arguments: ResumeData.Form.allCases)
    func roundTripsWithEverythingOptionalLeftOut(form: ResumeData.Form) throws {
        var bare = ResumeData(downloadURL: "http://example.com/a%20b?x=1&y=2", bytesReceived: 0, entityTag: nil,
                              serverDownloadDate: nil, tempFileName: nil)
        bare.originalRequestURL = nil
        bare.currentRequestRange = nil
        let (decoded, _) = try ResumeData.decode(try bare.encoded(as: form))
        var expected = bare
        if form == .propertyListV1 { expected.infoVersion = 1 }
        #expect(decoded == expected)
    }

    @Test func version1KeepsItsLocalPath() throws {
        let (v1, _) = try ResumeData.decode(ResumeBlob.version1())
        let (again, form) = try ResumeData.decode(try v1.encoded(as: .propertyListV1))
        #expect(form == .propertyListV1)
        #expect(again == v1)
    }

    @Test func encodesEachFormInItsShape() throws {
        for form in [ResumeData.Form.propertyListV1, .propertyListV2] {
            let data = try Self.sample.encoded(as: form)
            #expect(data.starts(with: Array("<?xml".utf8)), "\(form)")
        }
        let archive = try Self.sample.encoded(as: .keyedArchive)
        #expect(archive.starts(with: Array("bplist00".utf8)))
        let plist = try #require(try PropertyListSerialization.propertyList(from: archive, format: nil) as? [String: Any])
        #expect(plist["$archiver"] as? String == "NSKeyedArchiver")
        #expect((plist["$top"] as? [String: Any])?.keys.sorted() == [ResumeBlob.rootKey])

        // What NSKeyedUnarchiver (an iPhone's, or this platform's) finds inside: a plain dictionary.
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archive)
        let root = unarchiver.decodeObject(of: [NSDictionary.self, NSString.self, NSNumber.self, NSData.self],
                                           forKey: ResumeBlob.rootKey) as? NSDictionary
        unarchiver.finishDecoding()
        let dictionary = try #require(root)
        #expect(dictionary["NSURLSessionDownloadURL"] as? String == ResumeBlob.url)
        #expect((dictionary["NSURLSessionResumeBytesReceived"] as? NSNumber)?.int64Value == 26_843_545)
        #expect(dictionary["NSURLSessionResumeInfoTempFileName"] as? String == "CFNetworkDownload_Rt1234.tmp")
        #expect((dictionary["NSURLSessionResumeInfoVersion"] as? NSNumber)?.intValue == 2)
        #expect(dictionary["NSURLSessionResumeInfoLocalPath"] == nil)
        #expect(dictionary["NSURLSessionResumeCurrentRequest"] is Data)
    }

    @Test func refusesToEncodeWhatCouldNotBeDecoded() {
        var empty = Self.sample
        empty.downloadURL = ""
        #expect(throws: ResumeDataError.self) { try empty.encoded(as: .keyedArchive) }
        var negative = Self.sample
        negative.bytesReceived = -1
        #expect(throws: ResumeDataError.self) { try negative.encoded(as: .propertyListV2) }
        var escaping = Self.sample
        escaping.tempFileName = "../outside.tmp"
        #expect(throws: ResumeDataError.self) { try escaping.encoded(as: .keyedArchive) }
        var versionless = Self.sample
        versionless.infoVersion = 0
        #expect(throws: ResumeDataError.self) { try versionless.encoded(as: .propertyListV1) }
    }

    // MARK: Garbage

    static func message(decoding data: Data) -> String? {
        do {
            _ = try ResumeData.decode(data)
            return nil
        } catch let error as ResumeDataError {
            return error.description
        } catch {
            return "unexpected error type: \(error)"
        }
    }

    @Test func rejectsWhatIsNotAPropertyList() {
        var generator = SplitMix64(state: 42)
        for _ in 0..<50 {
            // A first byte that is neither "<" nor "b", so no chance of a valid plist.
            let random = [0x01] + (0..<Int.random(in: 0..<200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(Self.message(decoding: Data(random)) == "not a property list")
        }
        #expect(Self.message(decoding: Data()) == "not a property list: the data is empty")
        // OpenStep text would parse as a string: iOS never writes it.
        #expect(Self.message(decoding: Data("hello".utf8)) == "not a property list")
        #expect(Self.message(decoding: Data("bplist00garbage".utf8)) == "not a property list")
        #expect(Self.message(decoding: Data("<?xml version=\"1.0\"?><plist><dict><key>a</key>".utf8)) == "not a property list")
        #expect(Self.message(decoding: Data("{\"NSURLSessionDownloadURL\": \"x\"}".utf8)) == "not a property list")
    }

    @Test func rejectsPropertyListsThatAreNotResumeData() {
        let resume: [String: Any] = [
            "NSURLSessionDownloadURL": ResumeBlob.url,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 5),
            "NSURLSessionResumeInfoVersion": NSNumber(value: 2),
        ]
        func with(_ key: String, _ value: Any?) -> Data {
            var dictionary = resume
            dictionary[key] = value
            return ResumeBlob.plist(dictionary)
        }
        let cases: [(Data, String)] = [
            (ResumeBlob.plist(["a", "b"]), "a property list, but not resume data: the top level is an array, not a dictionary"),
            (ResumeBlob.plist("just a string", binary: true), "a property list, but not resume data: the top level is a string, not a dictionary"),
            (ResumeBlob.plist(["Name": "Download Lab"]), "a property list, but not resume data: no NSURLSessionDownloadURL"),
            (with("NSURLSessionResumeBytesReceived", nil), "a property list, but not resume data: no NSURLSessionResumeBytesReceived"),
            (with("NSURLSessionDownloadURL", NSNumber(value: 1)), "NSURLSessionDownloadURL is not a string"),
            (with("NSURLSessionDownloadURL", ""), "NSURLSessionDownloadURL is empty"),
            (with("NSURLSessionResumeBytesReceived", "lots"), "NSURLSessionResumeBytesReceived is not a number"),
            (with("NSURLSessionResumeBytesReceived", true), "NSURLSessionResumeBytesReceived is not a number"),
            (with("NSURLSessionResumeBytesReceived", NSNumber(value: 1.5)), "NSURLSessionResumeBytesReceived is not a whole number (1.5)"),
            (with("NSURLSessionResumeBytesReceived", NSNumber(value: -5)), "NSURLSessionResumeBytesReceived is negative (-5)"),
            (with("NSURLSessionResumeInfoVersion", "two"), "NSURLSessionResumeInfoVersion is not a number"),
            (with("NSURLSessionResumeInfoVersion", NSNumber(value: 0)), "NSURLSessionResumeInfoVersion is 0, not a version number"),
            (with("NSURLSessionResumeEntityTag", NSNumber(value: 42)), "NSURLSessionResumeEntityTag is not a string"),
            (with("NSURLSessionResumeServerDownloadDate", ["x"]), "NSURLSessionResumeServerDownloadDate is not a string"),
            (with("NSURLSessionResumeInfoTempFileName", Data([1])), "NSURLSessionResumeInfoTempFileName is not a string"),
            (with("NSURLSessionResumeInfoLocalPath", false), "NSURLSessionResumeInfoLocalPath is not a string"),
            (with("NSURLSessionResumeInfoTempFileName", "../../.ssh/id_rsa"),
             "NSURLSessionResumeInfoTempFileName is not a plain file name (\"../../.ssh/id_rsa\")"),
            (with("NSURLSessionResumeInfoTempFileName", ".."), "NSURLSessionResumeInfoTempFileName is not a plain file name (\"..\")"),
            (with("NSURLSessionResumeInfoTempFileName", ""), "NSURLSessionResumeInfoTempFileName is not a plain file name (\"\")"),
            // Version 1 names the file by its full path; its last component must be a plain name too.
            (with("NSURLSessionResumeInfoLocalPath", "/x/.."),
             "NSURLSessionResumeInfoLocalPath does not end in a plain file name (\"/x/..\")"),
            (with("NSURLSessionResumeInfoLocalPath", "/tmp/."),
             "NSURLSessionResumeInfoLocalPath does not end in a plain file name (\"/tmp/.\")"),
            (with("NSURLSessionResumeInfoLocalPath", "/"), "NSURLSessionResumeInfoLocalPath does not end in a plain file name (\"/\")"),
            (with("NSURLSessionResumeInfoLocalPath", ""), "NSURLSessionResumeInfoLocalPath does not end in a plain file name (\"\")"),
        ]
        for (data, expected) in cases {
            #expect(Self.message(decoding: data) == expected)
        }
    }

    /// A version 1 path is only ever used for its last component, inside the resuming folder.
    @Test(arguments: [("a/../../b", "b"), ("/etc/passwd", "passwd"), ("/var/tmp/CFNetworkDownload_x.tmp/", "CFNetworkDownload_x.tmp")])
    func aLocalPathGivesOnlyItsLastComponent(path: String, name: String) throws {
        let data = ResumeBlob.plist([
            "NSURLSessionDownloadURL": ResumeBlob.url,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 5),
            "NSURLSessionResumeInfoLocalPath": path,
        ])
        let decoded = try ResumeData.decode(data).resumeData
        #expect(decoded.tempFileName == name)
        #expect(decoded.localPath == path)
    }

    @Test func rejectsKeyedArchivesOfSomethingElse() {
        let cases: [(Data, String)] = [
            (ResumeBlob.archive(["a", "b"] as NSArray), "a keyed archive, but not resume data: the root object is NSArray, not a dictionary"),
            (ResumeBlob.archive(NSString(string: "hi")), "a keyed archive, but not resume data: the root object is a string, not a dictionary"),
            (ResumeBlob.archive(["Name": "Download Lab"] as NSDictionary), "a keyed archive, but not resume data: no NSURLSessionDownloadURL"),
            (ResumeBlob.archive(["NSURLSessionDownloadURL": ResumeBlob.url, "NSURLSessionResumeBytesReceived": "many"] as NSDictionary),
             "NSURLSessionResumeBytesReceived is not a number"),
            // NSURL is outside what NSKeyedUnarchiver would be allowed to decode here: it must fail, not crash.
            (ResumeBlob.archive([URL(string: "http://x")!] as NSArray), "a keyed archive, but not resume data: the root object is NSArray, not a dictionary"),
            (ResumeBlob.plist(["$archiver": "NSKeyedArchiver", "$top": ["root": "x"]] as [String: Any]), "a keyed archive, but a damaged one: no $objects table"),
        ]
        for (data, expected) in cases {
            #expect(Self.message(decoding: data) == expected)
        }
    }

    /// `PropertyListSerialization` crashes on Linux on a binary plist holding a set; this one is
    /// the set {5}, hand-assembled: header, two objects, offset table, trailer.
    @Test func aBinaryPropertyListWithASetDoesNotCrash() {
        var bytes = Array("bplist00".utf8)
        bytes += [0xC1, 0x01]  // object 0 at 8: a set of one reference, to object 1
        bytes += [0x10, 0x05]  // object 1 at 10: the integer 5
        bytes += [8, 10]  // offset table at 12
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]  // unused, sort version, offset size 1, reference size 1
        bytes += [0, 0, 0, 0, 0, 0, 0, 2]  // two objects
        bytes += [0, 0, 0, 0, 0, 0, 0, 0]  // the top is object 0
        bytes += [0, 0, 0, 0, 0, 0, 0, 12]  // where the offset table starts
        #expect(Self.message(decoding: Data(bytes))
            == "a property list, but not resume data: the top level is an array, not a dictionary")
    }

    /// Damaged copies of every form: each decodes or fails with one line; none crashes.
    @Test func survivesDamagedBlobs() throws {
        var generator = SplitMix64(state: 2024)
        let seeds = try ResumeData.Form.allCases.map { try Self.sample.encoded(as: $0) }
            + [ResumeBlob.version1(), ResumeBlob.version2(binary: true), try ResumeBlob.keyedArchive()]
        for round in 0..<1_200 {
            var data = seeds[round % seeds.count]
            for _ in 0..<Int.random(in: 1...6, using: &generator) where !data.isEmpty {
                let position = Int.random(in: 0..<data.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: data[position] = UInt8.random(in: 0...255, using: &generator)
                case 1: data[position] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
                default: data.removeSubrange(position..<min(data.count, position + Int.random(in: 1...16, using: &generator)))
                }
            }
            if let message = Self.message(decoding: data) {
                #expect(!message.isEmpty && !message.contains("\n") && !message.hasPrefix("unexpected"), "round \(round): \(message)")
            }
        }
    }

    @Test func errorsAreOneLine() {
        #expect(ResumeDataError("a\nb\tc").description == "a b c")
    }

    @Test func formsDescribeThemselves() {
        #expect(ResumeData.Form.allCases.map(\.description) == [
            "property list, version 1 (iOS 7 and 8)",
            "property list, version 2 (iOS 9 to 11)",
            "keyed archive (iOS 12 and later)",
        ])
    }
}
