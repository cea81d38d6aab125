import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabKit
import LabServer
import LabVocabulary
import TestServers
import Testing

/// lesson-07-multipart-upload, run as a child process; it starts its own embedded server and
/// uploads to `POST /upload`.
@Suite(.serialized)
final class Lesson07Tests {
    let directory: URL

    init() throws {
        directory = try scratchDirectory()
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    private func lesson(_ variant: Variant, size: Int64, output: URL? = nil, way: MultipartUploadWay? = nil,
                        timeout: TimeInterval = 300) throws -> ChildProcess.Finished {
        let output = output ?? directory.appendingPathComponent("\(variant)-\(UUID().uuidString).bin")
        return try ChildProcess.run(
            "lesson-07-multipart-upload",
            ["--size", String(size), "--output", output.path, "--variant", variant.rawValue, "--json"]
                + (way.map { ["--way", $0.rawValue] } ?? []),
            timeout: timeout)
    }

    private func fixture(size: Int64) -> Fixture { Fixture(name: "lesson-07-multipart-upload", size: size) }

    /// Both ways of the corrected variant: the body streamed part after part (the default), and
    /// the body written to a file first.
    @Test(arguments: [nil] + MultipartUploadWay.allCases)
    func correctedUploadArrivesWithTheSameBytesAndDigest(way: MultipartUploadWay?) throws {
        let size: Int64 = 3_000_017
        let finished = try lesson(.corrected, size: size, way: way)
        #expect(finished.status == 0, "\(finished.stderr)")
        let story = way == .bodyFile ? "body written to a file: 3000" : "body streamed from the file: 3000"
        #expect(finished.stderr.contains(story), "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.outcome == .verified)
        #expect(result.fileBytes == size)
        #expect(result.resourceBytes == size)
        #expect(result.expectedSHA256 == fixture(size: size).sha256Hex())
        #expect(result.actualSHA256 == fixture(size: size).sha256Hex())
        #expect(result.requests.map(\.method) == [.post])
        #expect(result.requests.first?.status == 200)
        // The server's answer is the check: nothing is read back here.
        #expect(result.verificationSeconds == 0)
        #expect(finished.stderr.contains("\"fields\":{\"note\":\"sent by lesson-07-multipart-upload\"}"), "\(finished.stderr)")
    }

    /// The article's extra CRLF ends up inside the file part: two bytes more, another digest.
    @Test func articleUploadArrivesTwoBytesLonger() throws {
        let size: Int64 = 3_000_017
        let output = directory.appendingPathComponent("article.bin")
        let finished = try lesson(.article, size: size, output: output)
        #expect(finished.status == ExitStatus.verificationFailed.rawValue, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.outcome == .verificationFailed)
        #expect(result.fileBytes == size + 2)
        #expect(result.expectedSHA256 == fixture(size: size).sha256Hex())
        #expect(result.actualSHA256 != fixture(size: size).sha256Hex())
        // What arrived is exactly the file followed by CRLF.
        let handle = try FileHandle(forWritingTo: output)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("\r\n".utf8))
        try handle.close()
        #expect(result.actualSHA256 == (try FileDigest.sha256Hex(of: output)))
        // The text field still arrives intact.
        #expect(finished.stderr.contains("\"fields\":{\"note\":\"sent by lesson-07-multipart-upload\"}"), "\(finished.stderr)")
        // One line on stderr says what is wrong, after the story.
        let lastLine = finished.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(lastLine.hasPrefix("lesson-07-multipart-upload: the server received \"file\" as 3,000,019 bytes"), "\(lastLine)")
    }

    /// A file name with a quote and a line break cannot add a header: it arrives percent-encoded.
    @Test func hostileFileNameIsEscaped() throws {
        let size: Int64 = 1000
        let name = "evil\"\r\nX-Injected: yes\r\nY: \".bin"  // no "/": it has to be one file name
        let finished = try lesson(.corrected, size: size, output: directory.appendingPathComponent(name))
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(try finished.result().fileBytes == size)
        #expect(finished.stderr.contains(
            "\"filename\":\"evil%22%0D%0AX-Injected: yes%0D%0AY: %22.bin\",\"contentType\":\"application/octet-stream\""),
            "\(finished.stderr)")
    }

    /// The ways are the corrected variant's: asking the article for one is one line and exit 64.
    @Test func articleHasNoWays() throws {
        let finished = try lesson(.article, size: 1000, way: .stream)
        #expect(finished.status == ExitStatus.usage.rawValue)
        #expect(finished.stderr == "lesson-07-multipart-upload: --way: the article variant has one way; "
                + "the ways are the corrected variant's\n")
    }

    /// The server refuses a body whose closing delimiter never comes.
    @Test func malformedBodyGets400() async throws {
        try await withLabServer { server in
            var request = URLRequest(url: server.baseURL.appendingPathComponent("upload"))
            request.httpMethod = "POST"
            request.setValue("multipart/form-data; boundary=abc", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data("--abc\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue without an end".utf8)
            let (_, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 400)
        }
    }

    /// The corrected variant streams the body (its default way, chunked, as a stream has no
    /// length to announce): 1 GiB goes out with a flat memory profile.
    @Test func correctedOneGibibyteStaysUnder96MB() throws {
        let size: Int64 = 1 << 30
        let finished = try lesson(.corrected, size: size, timeout: 900)
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.verified)
        #expect(result.fileBytes == size)
        #expect(result.peakRSSBytes < 96_000_000, "peak RSS \(result.peakRSSBytes)")
    }
}
