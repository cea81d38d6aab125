import Foundation
import TestFolders
import LabFixtures
@testable import LabServer
import LabVocabulary
import TestServers
import Testing

/// One part of a hand-built multipart body: its header lines (without CRLFs) and its bytes.
struct TestPart {
    var headers: [String]
    var body: [UInt8]

    static func field(_ name: String, _ value: String) -> TestPart {
        TestPart(headers: ["Content-Disposition: form-data; name=\"\(name)\""], body: Array(value.utf8))
    }

    static func file(_ name: String, _ filename: String, type: String, _ body: [UInt8]) -> TestPart {
        TestPart(headers: ["Content-Disposition: form-data; name=\"\(name)\"; filename=\"\(filename)\"",
                           "Content-Type: \(type)"], body: body)
    }
}

func multipartBody(_ parts: [TestPart], boundary: String, preamble: String = "", close: Bool = true) -> [UInt8] {
    var body = Array(preamble.utf8)
    for part in parts {
        body += Array("--\(boundary)\r\n".utf8)
        for header in part.headers { body += Array("\(header)\r\n".utf8) }
        body += Array("\r\n".utf8) + part.body + Array("\r\n".utf8)
    }
    if close { body += Array("--\(boundary)--\r\n".utf8) }
    return body
}

/// Sends a POST /upload and reads the answer. `chunk` splits the body into writes that size.
func upload(_ server: LabServer, body: [UInt8], contentType: String?, chunk: Int? = nil,
            connection: RawHTTPConnection? = nil) throws -> RawResponse {
    let connection = try connection ?? RawHTTPConnection(port: server.port)
    var headers = [("Content-Length", "\(body.count)")]
    if let contentType { headers.append(("Content-Type", contentType)) }
    try connection.sendRequest("POST", "/upload", headers: headers)
    if let chunk {
        connection.disableNagle()
        var offset = 0
        while offset < body.count {
            try connection.write(bytes: Array(body[offset..<min(offset + chunk, body.count)]))
            offset += chunk
        }
    } else {
        try connection.write(bytes: body)
    }
    return try connection.readResponse()
}

@Suite("POST /upload")
struct UploadTests {
    static let boundary = "----LabBoundary7MA4YWxkTrZu0gW"

    /// Bytes with CRs, LFs, hyphens and a near-miss of the delimiter inside.
    static let trickyFile: [UInt8] = {
        var bytes = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 13) }
        bytes += Array("\r\n--\(boundary.dropLast())X\r\n--".utf8) + [13, 13, 10, 45, 45]
        return bytes
    }()

    static let parts: [TestPart] = [
        .field("note", "hello"),
        .file("file", "a.bin", type: "application/octet-stream", trickyFile),
        .field("empty", ""),
        .file("second", "b.txt", type: "text/plain", Array("line one\r\nline two\n".utf8)),
    ]

    static var expectedJSON: String {
        let body = multipartBody(parts, boundary: boundary)
        return "{\"fields\":{\"note\":\"hello\",\"empty\":\"\"},\"files\":["
            + "{\"name\":\"file\",\"filename\":\"a.bin\",\"contentType\":\"application/octet-stream\","
            + "\"bytes\":\(trickyFile.count),\"sha256\":\"\(oneShotSHA256Hex(trickyFile))\"},"
            + "{\"name\":\"second\",\"filename\":\"b.txt\",\"contentType\":\"text/plain\","
            + "\"bytes\":19,\"sha256\":\"\(oneShotSHA256Hex(Array("line one\r\nline two\n".utf8)))\"}],"
            + "\"bodyBytes\":\(body.count)}\n"
    }

    @Test("two fields and two files get the exact JSON answer, and the connection stays usable")
    func exactAnswer() throws {
        try withLabServer { server in
            let connection = try RawHTTPConnection(port: server.port)
            let body = multipartBody(Self.parts, boundary: Self.boundary)
            let response = try upload(server, body: body,
                                      contentType: "multipart/form-data; boundary=\(Self.boundary)", connection: connection)
            #expect(response.status == 200)
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.bodyText == Self.expectedJSON)
            #expect(server.requestLog.last?.method == .post)
            #expect(server.requestLog.last?.target == "/upload")
            #expect(server.requestLog.last?.status == 200)
            // What the upload sent, for `lab compare`'s bytes on the wire.
            #expect(server.requestLog.last?.requestBodyBytes == Int64(body.count))

            try connection.sendRequest("GET", "/")
            #expect(try connection.readResponse().status == 200)
        }
    }

    @Test("a quoted boundary and a preamble are fine")
    func quotedBoundary() throws {
        try withLabServer { server in
            let response = try upload(server, body: multipartBody(Self.parts, boundary: "a b:c", preamble: "ignored\r\n"),
                                      contentType: "Multipart/Form-Data; boundary=\"a b:c\"")
            #expect(response.status == 200)
            #expect(response.bodyText.hasPrefix("{\"fields\":{\"note\":\"hello\",\"empty\":\"\"},"))
        }
    }

    @Test("the body written one byte at a time gives the same answer")
    func byteByByte() throws {
        try withLabServer { server in
            let response = try upload(server, body: multipartBody(Self.parts, boundary: Self.boundary),
                                      contentType: "multipart/form-data; boundary=\(Self.boundary)", chunk: 1)
            #expect(response.status == 200)
            #expect(response.bodyText == Self.expectedJSON)
        }
    }

    @Test("the parser fed one byte at a time finds the same parts as fed all at once")
    func parserChunking() throws {
        let body = multipartBody(Self.parts, boundary: Self.boundary)
        var whole = MultipartParser(boundary: Self.boundary)
        try whole.feed(body)
        var bytewise = MultipartParser(boundary: Self.boundary)
        for byte in body { try bytewise.feed([byte]) }
        let expected = try whole.finish()
        #expect(try bytewise.finish() == expected)
        #expect(expected.count == 4)
        #expect(expected[1].bytes == Int64(Self.trickyFile.count))
    }

    @Test("every split of the body into two chunks finds the same parts")
    func parserEverySplit() throws {
        let body = multipartBody(Self.parts, boundary: Self.boundary)
        var whole = MultipartParser(boundary: Self.boundary)
        try whole.feed(body)
        let expected = try whole.finish()
        for split in 0...body.count {
            var parser = MultipartParser(boundary: Self.boundary)
            try parser.feed(Array(body[..<split]))
            try parser.feed(Array(body[split...]))
            #expect(try parser.finish() == expected, "split at \(split)")
        }
    }

    @Test("JSON strings escape quotes, backslashes and control characters")
    func jsonEscaping() {
        #expect(UploadEndpoint.quoted("a\"b\\c\r\n\t\u{01}\u{7F}é") == #""a\"b\\c\r\n\t\u0001\u007fé""#)
    }

    @Test("a hostile filename is reported as parsed, escaped in the JSON")
    func hostileFilename() throws {
        try withLabServer { server in
            let part = TestPart(
                headers: [#"Content-Disposition: form-data; name="f"; filename="x\"; name=\"evil\\%0D%0AX-Injected: 1"# + "\t" + #".bin""#],
                body: Array("data".utf8))
            let response = try upload(server, body: multipartBody([part], boundary: "b"),
                                      contentType: "multipart/form-data; boundary=b")
            #expect(response.status == 200)
            #expect(response.header("X-Injected") == nil)
            let expectedName = #"x\"; name=\"evil\\%0D%0AX-Injected: 1\t.bin"#
            #expect(response.bodyText.contains("\"name\":\"f\",\"filename\":\"\(expectedName)\",\"contentType\":null"))
            let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            let file = (object?["files"] as? [[String: Any]])?.first
            #expect(file?["filename"] as? String == "x\"; name=\"evil\\%0D%0AX-Injected: 1\t.bin")
            #expect(file?["name"] as? String == "f")
        }
    }

    @Test("a raw CRLF inside a filename cannot add a header: the part is malformed")
    func crlfInFilename() throws {
        try withLabServer { server in
            let part = TestPart(headers: ["Content-Disposition: form-data; name=\"f\"; filename=\"a\r\nX-Injected: 1\""],
                                body: Array("data".utf8))
            let response = try upload(server, body: multipartBody([part], boundary: "b"),
                                      contentType: "multipart/form-data; boundary=b")
            #expect(response.status == 400)
            #expect(response.header("X-Injected") == nil)
            #expect(response.bodyText == "unterminated quoted string in parameter filename\n")
        }
    }

    @Test("malformed bodies and heads are refused with a one-line reason", arguments: [
        ("multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nno close",
         400, "the body ended before the closing delimiter \"--b--\"\n"),
        ("multipart/form-data", "--b\r\n\r\n--b--\r\n", 400, "Content-Type multipart/form-data has no boundary parameter\n"),
        ("multipart/form-data; boundary=b", "garbage without any delimiter", 400, "no \"--b\" delimiter in the body\n"),
        ("multipart/form-data; boundary=b", "--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--\r\n",
         400, "a part has no Content-Disposition header\n"),
        ("multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; filename=\"a\"\r\n\r\nx\r\n--b--\r\n",
         400, "a part's Content-Disposition has no name parameter\n"),
        ("multipart/form-data; boundary=b", "--bX\r\n", 400,
         "unexpected bytes after the delimiter \"--b\" (expected CRLF or \"--\")\n"),
        ("multipart/form-data; boundary=\(String(repeating: "x", count: 71))", "", 400,
         "bad boundary: RFC 2046 allows 1 to 70 letters, digits and '()+_,-./:=? or inner spaces\n"),
        ("application/json", "{}", 415, "Content-Type is application/json; expected multipart/form-data; boundary=...\n"),
    ])
    func malformed(contentType: String, body: String, status: Int, reason: String) throws {
        try withLabServer { server in
            let response = try upload(server, body: Array(body.utf8), contentType: contentType)
            #expect(response.status == status)
            #expect(response.bodyText == reason)
            #expect(server.requestLog.last?.status == status)
        }
    }

    @Test("no Content-Type is 415")
    func noContentType() throws {
        try withLabServer { server in
            let response = try upload(server, body: [], contentType: nil)
            #expect(response.status == 415)
            #expect(isOneLine(response.bodyText))
        }
    }

    @Test("bounds: too many parts, a large field, a huge Content-Length are 413")
    func bounds() throws {
        try withLabServer { server in
            let manyParts = multipartBody((0...100).map { .field("f\($0)", "x") }, boundary: "b")
            var response = try upload(server, body: manyParts, contentType: "multipart/form-data; boundary=b")
            #expect(response.status == 413)
            #expect(response.bodyText == "more than 100 parts\n")

            let bigField = multipartBody([.field("big", String(repeating: "x", count: 64 * 1024 + 1))], boundary: "b")
            response = try upload(server, body: bigField, contentType: "multipart/form-data; boundary=b")
            #expect(response.status == 413)
            #expect(response.bodyText == "form field \"big\" is over 64KiB; send it as a file\n")

            let connection = try RawHTTPConnection(port: server.port)
            try connection.sendRequest("POST", "/upload", headers: [
                ("Content-Type", "multipart/form-data; boundary=b"), ("Content-Length", "\(Int64(9) << 30)"),
                ("Expect", "100-continue"),
            ])
            response = try connection.readResponse()
            #expect(response.status == 413)
            #expect(response.header("Connection") == "close")
            #expect(response.bodyText == "the body is over 8GiB, the most this endpoint accepts\n")
        }
    }

    @Test("Expect: 100-continue gets 100 Continue before the body is sent")
    func expectContinue() throws {
        try withLabServer { server in
            let body = multipartBody(Self.parts, boundary: Self.boundary)
            let connection = try RawHTTPConnection(port: server.port)
            try connection.sendRequest("POST", "/upload", headers: [
                ("Content-Type", "multipart/form-data; boundary=\(Self.boundary)"), ("Content-Length", "\(body.count)"),
                ("Expect", "100-continue"),
            ])
            let interim = try connection.readResponse()
            #expect(interim.status == 100)
            try connection.write(bytes: body)
            let response = try connection.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText == Self.expectedJSON)
        }
    }

    @Test("the index page documents the endpoint")
    func indexPage() throws {
        try withLabServer { server in
            let response = try fetch(server, "GET", "/")
            #expect(response.bodyText.contains("POST /upload"))
            #expect(response.bodyText.contains("curl -F file=@some.bin"))
        }
    }

    @Test("other methods on /upload are 405 with Allow: POST", arguments: ["GET", "PUT", "HEAD"])
    func wrongMethod(method: String) throws {
        try withLabServer { server in
            let connection = try RawHTTPConnection(port: server.port)
            try connection.sendRequest(method, "/upload", headers: [("Content-Length", "0")])
            let response = try connection.readResponse(isHead: method == "HEAD")
            #expect(response.status == 405)
            #expect(response.header("Allow") == "POST")
        }
    }

    @Test("curl -F uploads a file and a field", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")))
    func curlEndToEnd() throws {
        try withLabServer { server in
            let fileBytes = expectedBytes(Fixture(name: "curl-upload", size: 3 << 20))
            let url = TestFolders.root.appendingPathComponent("lab-upload-\(UUID().uuidString).bin")
            try Data(fileBytes).write(to: url)
            defer { try? FileManager.default.removeItem(at: url) }

            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["-sS", "--max-time", "30", "-F", "file=@\(url.path)", "-F", "note=hi",
                              "http://127.0.0.1:\(server.port)/upload"]
            let output = Pipe()
            curl.standardOutput = output
            try curl.run()
            let answer = output.fileHandleForReading.readDataToEndOfFile()
            curl.waitUntilExit()
            #expect(curl.terminationStatus == 0)

            let object = try #require(try JSONSerialization.jsonObject(with: answer) as? [String: Any])
            #expect(object["fields"] as? [String: String] == ["note": "hi"])
            let file = try #require((object["files"] as? [[String: Any]])?.first)
            #expect(file["name"] as? String == "file")
            #expect(file["filename"] as? String == url.lastPathComponent)
            #expect(file["contentType"] as? String == "application/octet-stream")
            #expect(file["bytes"] as? Int == fileBytes.count)
            #expect(file["sha256"] as? String == oneShotSHA256Hex(fileBytes))
        }
    }
}
