/// Lesson 07, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/07-multipart-upload.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun, _ way: MultipartUploadWay) -> any LessonUpload { CorrectedUpload(run, way: way) }

/// A correct body, never whole in memory: a random boundary, names escaped the way browsers do,
/// and no CRLF of its own after the file.
final class CorrectedUpload: LessonUpload {
    private let run: LessonRun
    private let way: MultipartUploadWay

    init(_ run: LessonRun, way: MultipartUploadWay) {
        self.run = run
        self.way = way
    }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let run = run
        let fixture = run.uploadFile
        var body = MultipartBody(fileName: run.file.lastPathComponent, fileField: "file",
                                 fields: [(TextField.name, TextField.value)])
        var request = URLRequest(url: run.url)
        request.httpMethod = "POST"
        switch way {
        case .stream:
            // A 128-bit random boundary, as browsers use: no file can be expected to contain it.
            // A stream has no length for URLSession to announce, so the body goes out chunked.
            request.setValue("multipart/form-data; boundary=\(body.boundary)", forHTTPHeaderField: "Content-Type")
            let length = body.length(around: fixture.size)
            run.log("body streamed from the file: \(length) bytes, boundary \(body.boundary)")
            let writer = MultipartBodyWriter(body, file: run.file)
            // URLSession asks its delegate for the body (needNewBodyStream), again if it must resend it.
            UploadExchange(run, bodyBytes: length, bodyStream: writer.newStream)
                .send({ session in session.uploadTask(withStreamedRequest: request) }) { sent in
                    // A file that could not be read is the reason, whatever the server answered.
                    completion(writer.failure.map { .failed($0) } ?? sent.check(run, sent: fixture))
                }
        case .bodyFile:
            // Beside the file it is made from: in the app's own folder, and on the same disk.
            let bodyFile = run.file.deletingLastPathComponent().appendingPathComponent(".body-\(UUID().uuidString)")
            do {
                body = try MultipartBodyFile.write(body, to: bodyFile, file: run.file)
            } catch {
                try? FileManager.default.removeItem(at: bodyFile)
                return completion(.failed(DownloadError.localIO(path: bodyFile.path, reason: error.localizedDescription)))
            }
            let length = body.length(around: fixture.size)
            request.setValue("multipart/form-data; boundary=\(body.boundary)", forHTTPHeaderField: "Content-Type")
            run.log("body written to a file: \(length) bytes, boundary \(body.boundary)")
            // Streamed from the file, which reads it again from its start whenever URLSession must
            // send the body again. Not uploadTask(fromFile:): on Linux, a task of that kind ended
            // before its body has gone (a server whose answer never ends) can crash Foundation.
            UploadExchange(run, bodyBytes: length, bodyStream: { InputStream(url: bodyFile) })
                .send({ session in session.uploadTask(withStreamedRequest: request) }) { sent in
                    try? FileManager.default.removeItem(at: bodyFile)
                    completion(sent.check(run, sent: fixture))
                }
        }
    }
}

/// What goes around the file's bytes in a multipart/form-data body (RFC 7578): `head` (the
/// delimiter and the file part's headers) before them, `tail` (each text field and the closing
/// delimiter) after them. The CRLF before each delimiter belongs to the delimiter.
struct MultipartBody {
    private(set) var boundary: String
    private let fileName: String
    private let fileField: String
    private let fields: [(String, String)]

    init(fileName: String, fileField: String, fields: [(String, String)]) {
        self.fileName = fileName
        self.fileField = fileField
        self.fields = fields
        boundary = Self.randomBoundary()
    }

    var head: Data {
        Data(("--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"\(Self.escaped(fileField))\"; filename=\"\(Self.escaped(fileName))\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n").utf8)
    }

    var tail: Data {
        var text = ""
        for (name, value) in fields {
            text += "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escaped(name))\"\r\n\r\n\(value)"
        }
        return Data((text + "\r\n--\(boundary)--\r\n").utf8)
    }

    /// The body's length around a file of `fileBytes`.
    func length(around fileBytes: Int64) -> Int64 { Int64(head.count + tail.count) + fileBytes }

    /// A fresh boundary, for a body whose file turned out to contain the old one.
    mutating func changeBoundary() { boundary = Self.randomBoundary() }

    private static func randomBoundary() -> String {
        "DownloadLab-" + (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
    }

    /// RFC 7578 / the HTML standard: in a name or file name, `"` becomes %22, CR %0D, LF %0A.
    static func escaped(_ name: String) -> String {
        name.replacingOccurrences(of: "\"", with: "%22")
            .replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }
}

/// The body as a stream: `head`, then the file, then `tail`, written by a thread of its own into
/// a bound pair of streams while URLSession reads the other end. At most the pair's 64 KiB buffer
/// and one piece of the file are in memory, whatever the file's size.
final class MultipartBodyWriter: Sendable {
    private let head: Data
    private let tail: Data
    private let file: URL
    private let failed = Mutex<(any Error)?>(nil)

    init(_ body: MultipartBody, file: URL) {
        head = body.head
        tail = body.tail
        self.file = file
    }

    /// Why the body could not be written whole (the file could not be read). The server then got
    /// a body without its closing delimiter, which it refuses.
    var failure: (any Error)? { failed.withLock { $0 } }

    /// A stream that reads the whole body from the start, written as it is read.
    func newStream() -> InputStream? {
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: 64 << 10, inputStream: &input, outputStream: &output)
        guard let input, let output else { return nil }
        nonisolated(unsafe) let writingEnd = output  // handed to the writer's thread, used there only
        Thread { self.write(to: writingEnd) }.start()
        return input
    }

    private func write(to output: OutputStream) {
        output.open()
        defer { output.close() }
        do {
            let reader = try FileHandle(forReadingFrom: file)
            defer { try? reader.close() }
            guard write(head, to: output) else { return }
            while let piece = try reader.read(upToCount: 64 << 10), !piece.isEmpty {
                guard write(piece, to: output) else { return }
            }
            _ = write(tail, to: output)
        } catch {
            // No tail: a body cut short is refused, never stored as a shorter file.
            failed.withLock { $0 = DownloadError.cannotRead(path: file.path, reason: error.localizedDescription) }
        }
    }

    /// Writes all of `bytes`; false when the reading end has gone (the upload ended or failed).
    private func write(_ bytes: Data, to output: OutputStream) -> Bool {
        bytes.withUnsafeBytes { buffer in
            guard let start = buffer.bindMemory(to: UInt8.self).baseAddress else { return true }
            var offset = 0
            while offset < buffer.count {
                let written = output.write(start + offset, maxLength: buffer.count - offset)
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }
}

/// Writes a multipart/form-data body to a file without holding the uploaded file in memory.
enum MultipartBodyFile {
    /// Returns the body as written: its boundary is proven absent from the file's bytes (a clash,
    /// which is astronomically unlikely, means starting over with a new one).
    static func write(_ body: MultipartBody, to bodyFile: URL, file: URL) throws -> MultipartBody {
        var body = body
        while try !writeOnce(body, to: bodyFile, file: file) {
            body.changeBoundary()
        }
        return body
    }

    private static func writeOnce(_ body: MultipartBody, to bodyFile: URL, file: URL) throws -> Bool {
        guard FileManager.default.createFile(atPath: bodyFile.path, contents: nil),
              let output = FileHandle(forWritingAtPath: bodyFile.path)
        else { throw DownloadError.localIO(path: bodyFile.path, reason: "cannot create the body file") }
        defer { try? output.close() }
        let input = try FileHandle(forReadingFrom: file)
        defer { try? input.close() }

        try output.write(contentsOf: body.head)
        let needle = Data(body.boundary.utf8)
        var tail = Data()  // the end of the previous chunk, so a boundary split across chunks is seen
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            if (tail + chunk.prefix(needle.count)).range(of: needle) != nil || chunk.range(of: needle) != nil {
                return false
            }
            tail = chunk.suffix(needle.count - 1)
            try output.write(contentsOf: chunk)
        }
        try output.write(contentsOf: body.tail)
        return true
    }
}
