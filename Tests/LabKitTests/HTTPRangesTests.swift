import Foundation
import TestFolders
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabKit
import LabVocabulary
import Testing

struct ContentRangeTests {
    @Test func parsesARange() {
        #expect(ContentRange(header: "bytes 100-199/1000") == .bytes(first: 100, last: 199, total: 1000))
        #expect(ContentRange(header: "bytes 0-0/*") == .bytes(first: 0, last: 0, total: nil))
        #expect(ContentRange(header: "bytes */1000") == .unsatisfied(total: 1000))
        #expect(ContentRange(header: "bytes 100-199/1000")?.total == 1000)
    }

    @Test(arguments: [
        "", "bytes", "bytes 100-199", "bytes=100-199/1000", "items 1-2/3", "bytes 200-100/1000",
        "bytes 100-1000/1000", "bytes -1-5/10", "bytes 1-5/ten", "bytes */*", "bytes 1-2-3/9",
    ])
    func rejectsMalformed(header: String) {
        #expect(ContentRange(header: header) == nil)
    }

    @Test func rangeHeaderAsksForEverythingFromAnOffset() {
        #expect(rangeHeader(from: 0) == "bytes=0-")
        #expect(rangeHeader(from: 3_000_000_000) == "bytes=3000000000-")
    }

    private func response(_ headers: [String: String]) -> HTTPURLResponse {
        HTTPURLResponse(url: URL(string: "http://127.0.0.1/x")!, statusCode: 206, httpVersion: "HTTP/1.1",
                        headerFields: headers)!
    }

    @Test func readsTheResumeValidator() {
        #expect(response(["ETag": "\"abc\"", "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"]).resumeValidator == "\"abc\"")
        #expect(response(["Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"]).resumeValidator == "Mon, 01 Jan 2024 00:00:00 GMT")
        // If-Range may carry neither a weak ETag nor, when there is an ETag, the date (RFC 9110 §13.1.5).
        #expect(response(["ETag": "W/\"abc\"", "Last-Modified": "Mon, 01 Jan 2024 00:00:00 GMT"]).resumeValidator == nil)
        // A compressed body's bytes are no offset into the file: nothing resumes onto them.
        #expect(response(["ETag": "\"abc\"", "Content-Encoding": "gzip"]).resumeValidator == nil)
        #expect(response(["ETag": "\"abc\"", "Content-Encoding": "identity"]).resumeValidator == "\"abc\"")
        #expect(response([:]).resumeValidator == nil)
    }

    @Test func readsReprDigest() {
        // SHA-256 of "abc".
        let digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        let base64 = "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        #expect(response(["Repr-Digest": "sha-256=:\(base64):"]).reprDigestSHA256 == digest)
        #expect(response(["Repr-Digest": "sha-512=:AAAA:, sha-256=:\(base64):"]).reprDigestSHA256 == digest)
        #expect(response(["Repr-Digest": "sha-256=:AAAA:"]).reprDigestSHA256 == nil)
        #expect(response([:]).reprDigestSHA256 == nil)
    }
}

struct ResumeStateTests {
    @Test func roundTripsThroughTheSidecar() throws {
        let folder = TestFolders.root.appendingPathComponent("resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("movie.bin")
        #expect(ResumeState.sidecar(for: file).lastPathComponent == "movie.bin.resume.json")
        #expect(ResumeState.load(for: file) == nil)

        let state = ResumeState(url: "http://127.0.0.1/movie", validator: "\"v1\"", total: 5_000_000_000)
        try state.save(for: file)
        #expect(ResumeState.load(for: file) == state)

        ResumeState.remove(for: file)
        #expect(!FileManager.default.fileExists(atPath: ResumeState.sidecar(for: file).path))
    }

    @Test func aDamagedSidecarIsNotTrusted() throws {
        let file = TestFolders.root.appendingPathComponent("damaged-\(UUID().uuidString).bin")
        try Data("{\"url\": 1".utf8).write(to: ResumeState.sidecar(for: file))
        defer { ResumeState.remove(for: file) }
        #expect(ResumeState.load(for: file) == nil)
    }
}

struct FileDigestTests {
    @Test func matchesKnownVectors() throws {
        let file = TestFolders.root.appendingPathComponent("digest-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("abc".utf8).write(to: file)
        #expect(try FileDigest.sha256Hex(of: file) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        try Data().write(to: file)
        #expect(try FileDigest.sha256Hex(of: file) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // One million "a": spans the 1 MiB read size.
        try Data(repeating: UInt8(ascii: "a"), count: 1_000_000).write(to: file)
        #expect(try FileDigest.sha256Hex(of: file) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func missingFileThrows() {
        #expect(throws: (any Error).self) { try FileDigest.sha256Hex(of: URL(fileURLWithPath: "/nonexistent/file")) }
    }
}

struct ByteFormatTests {
    @Test func formats() {
        #expect(ByteFormat.iec(0) == "0 B")
        #expect(ByteFormat.iec(1536) == "1.5 KiB")
        #expect(ByteFormat.iec(64 << 20) == "64.0 MiB")
        #expect(ByteFormat.grouped(67_108_864) == "67,108,864")
        #expect(ByteFormat.grouped(999) == "999")
        #expect(ByteFormat.grouped(-1234) == "-1,234")
    }
}
