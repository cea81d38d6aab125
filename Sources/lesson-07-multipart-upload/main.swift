/// Lesson 07: a multipart/form-data upload built by hand, with upload progress.
///
/// Follows section 5 of "网络篇 - 03.NSURLConnection应用场景": the request names a boundary in its
/// Content-Type, and the body is assembled piece by piece: a delimiter line, the file part's
/// headers, the file's bytes, a text field, the closing delimiter. Progress comes from
/// `didSendBodyData`, the session-era name of the callback that "IOS如何根据URL下载内容" offers
/// for estimating how far a POST has gone.
///
/// `ArticleUpload` keeps the article's body, defects included: the whole body sits in memory, the
/// file name goes into the header unescaped, and one CRLF too many follows the file's bytes, so
/// the server receives the file two bytes longer. `CorrectedUpload` sends a correct body without
/// holding the file in memory, in one of two ways (`--way`): read as a stream, part after part
/// (the default), or written to a body file first and sent with `uploadTask(fromFile:)`.
/// Read Lessons/07-multipart-upload.md next to this file.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

Lesson(
    id: "07-multipart-upload",
    title: "multipart/form-data upload built by hand, with upload progress",
    defaultSize: 16 << 20,
    defaultFaults: "",
    ways: Way.self,
    uploads: true
).run { run in
    switch run.variant {
    case .article: ArticleUpload(run)
    case .corrected: CorrectedUpload(run)
    }
}

/// The text field both variants send beside the file.
enum TextField {
    static let name = "note"
    static let value = "sent by lesson-07-multipart-upload"
}

/// How the corrected variant hands its body to URLSession, picked with `--way`. The article
/// variant has one way.
enum Way: String, LessonWay {
    case stream
    case bodyFile = "body-file"

    var summary: String {
        switch self {
        case .stream: "the body as a stream: head, the file, tail, read in turn as URLSession asks; nothing copied"
        case .bodyFile: "the body written to a file first, then uploadTask(fromFile:)"
        }
    }

    static var variants: [Variant] { [.corrected] }
}

// MARK: - The article's version

/// The article's body, byte for byte in shape: built whole in memory, sent in one piece.
final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile() -> AttemptResult {
        let fixture = run.uploadFile
        let fileData: Data
        do {
            fileData = try Data(contentsOf: run.file)  // the whole file in memory, as the article does
        } catch {
            return .failed(error)
        }
        // The header names the boundary; each delimiter in the body is "--" plus that boundary.
        let headerBoundary = "----DownloadLab"
        let delimiter = Data("------DownloadLab".utf8)
        let closeDelimiter = Data("------DownloadLab--".utf8)
        let newLine = Data("\r\n".utf8)

        var body = Data()
        body.append(delimiter)
        body.append(newLine)
        // Defect: the file name goes in as it is; a quote or a line break in it rewrites the headers.
        body.append(Data("Content-Disposition: form-data; name=\"file\"; filename=\"\(run.file.lastPathComponent)\"".utf8))
        body.append(newLine)
        body.append(Data("Content-Type: application/octet-stream".utf8))
        body.append(newLine)
        body.append(newLine)
        body.append(fileData)
        // Defect: two line breaks. The second one belongs to the next delimiter; the first one
        // becomes part of the file.
        body.append(newLine)
        body.append(newLine)
        body.append(delimiter)
        body.append(newLine)
        body.append(Data("Content-Disposition: form-data; name=\"\(TextField.name)\"".utf8))
        body.append(newLine)
        body.append(newLine)
        body.append(Data(TextField.value.utf8))
        body.append(newLine)
        body.append(closeDelimiter)

        var request = URLRequest(url: run.url)
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=\(headerBoundary)", forHTTPHeaderField: "Content-Type")
        run.log("body built in memory: \(ByteFormat.grouped(Int64(body.count))) bytes")
        return UploadExchange(run, bodyBytes: Int64(body.count))
            .send { session in session.uploadTask(with: request, from: body) }
            .check(run, sent: fixture)
    }
}

// MARK: - The corrected version

/// A correct body, never whole in memory: a random boundary, names escaped the way browsers do,
/// and no CRLF of its own after the file.
final class CorrectedUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile() -> AttemptResult {
        let fixture = run.uploadFile
        var body = MultipartBody(fileName: run.file.lastPathComponent, fileField: "file",
                                 fields: [(TextField.name, TextField.value)])
        var request = URLRequest(url: run.url)
        request.httpMethod = "POST"
        switch run.way(Way.self) {
        case .stream:
            // A 128-bit random boundary, as browsers use: no file can be expected to contain it.
            // A stream has no length for URLSession to announce, so the body goes out chunked.
            request.setValue("multipart/form-data; boundary=\(body.boundary)", forHTTPHeaderField: "Content-Type")
            request.httpBodyStream = MultipartBodyStream(body, file: run.file)
            let length = body.length(around: fixture.size)
            run.log("body streamed from the file: \(ByteFormat.grouped(length)) bytes, boundary \(body.boundary)")
            return UploadExchange(run, bodyBytes: length).send { session in session.dataTask(with: request) }
                .check(run, sent: fixture)
        case .bodyFile:
            let bodyFile = FileManager.default.temporaryDirectory
                .appendingPathComponent("download-lab", isDirectory: true)
                .appendingPathComponent("lesson-07-body-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: bodyFile) }
            do {
                body = try MultipartBodyFile.write(body, to: bodyFile, file: run.file)
            } catch {
                return .failed(DownloadError.localIO(path: bodyFile.path, reason: describe(error)))
            }
            let length = body.length(around: fixture.size)
            request.setValue("multipart/form-data; boundary=\(body.boundary)", forHTTPHeaderField: "Content-Type")
            request.setValue(String(length), forHTTPHeaderField: "Content-Length")
            run.log("body written to a file: \(ByteFormat.grouped(length)) bytes, boundary \(body.boundary)")
            return UploadExchange(run, bodyBytes: length)
                .send { session in session.uploadTask(with: request, fromFile: bodyFile) }
                .check(run, sent: fixture)
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

/// The body read as a stream: `head`, then the file, then `tail`, each piece as URLSession asks
/// for it (libcurl asks for 64 KiB at a time). Nothing is copied and memory stays flat.
///
/// Foundation on Linux has no bound stream pair (`Stream.getBoundStreams` is unsupported), so
/// the body is an `InputStream` of its own; URLSession uses only `open()`, `hasBytesAvailable`,
/// `read(_:maxLength:)` and `close()`.
final class MultipartBodyStream: InputStream {
    private enum Piece {
        case head(sent: Int)
        case file
        case tail(sent: Int)
        case ended
    }

    private let head: Data
    private let tail: Data
    private let file: URL
    private var input: FileHandle?
    private var piece = Piece.head(sent: 0)
    private var status = Stream.Status.notOpen
    private var failure: (any Error)?

    init(_ body: MultipartBody, file: URL) {
        head = body.head
        tail = body.tail
        self.file = file
        super.init(data: Data())
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { failure }
    override var hasBytesAvailable: Bool { status == .open }

    override func open() {
        do {
            input = try FileHandle(forReadingFrom: file)
            status = .open
        } catch {
            failure = error
            status = .error
        }
    }

    override func close() {
        try? input?.close()
        input = nil
        status = .closed
    }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) -> Int {
        guard status == .open, let input else { return status == .atEnd ? 0 : -1 }
        while true {
            switch piece {
            case .head(let sent) where sent < head.count:
                let count = min(maxLength, head.count - sent)
                head.copyBytes(to: buffer, from: sent..<sent + count)
                piece = .head(sent: sent + count)
                return count
            case .head:
                piece = .file
            case .file:
                let count = Foundation.read(input.fileDescriptor, buffer, maxLength)
                if count > 0 { return count }
                if count < 0 {
                    failure = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                    status = .error
                    return -1
                }
                piece = .tail(sent: 0)
            case .tail(let sent) where sent < tail.count:
                let count = min(maxLength, tail.count - sent)
                tail.copyBytes(to: buffer, from: sent..<sent + count)
                piece = .tail(sent: sent + count)
                return count
            case .tail, .ended:
                piece = .ended
                status = .atEnd
                return 0
            }
        }
    }
}

/// Writes a multipart/form-data body to a file without holding the uploaded file in memory.
enum MultipartBodyFile {
    /// Returns the body as written: its boundary is proven absent from the file's bytes (a clash,
    /// which is astronomically unlikely, means starting over with a new one).
    static func write(_ body: MultipartBody, to bodyFile: URL, file: URL) throws -> MultipartBody {
        try FileManager.default.createDirectory(at: bodyFile.deletingLastPathComponent(), withIntermediateDirectories: true)
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

// MARK: - The exchange, shared by both variants

/// Sends one request with a body, shows its progress from `didSendBodyData`, and collects the answer.
final class UploadExchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the callbacks run one at a time on the serial delegate queue, and send() reads
    // the state only after `done` is signalled.
    private let run: LessonRun
    /// The body's length, for the progress: URLSession knows none for a stream (it says -1).
    private let bodyBytes: Int64
    private var status = 0
    private var answer = Data()
    private var answerStarted: ContinuousClock.Instant?
    private var error: (any Error)?
    private let done = DispatchSemaphore(value: 0)
    /// The lab server answers in a few hundred bytes; a server whose answer never ends is given up
    /// on past these, instead of being held in memory for ever.
    static let longestAnswer = 1 << 20
    static let slowestAnswer = Duration.seconds(30)

    init(_ run: LessonRun, bodyBytes: Int64) {
        self.run = run
        self.bodyBytes = bodyBytes
    }

    struct Finished {
        let status: Int
        let answer: Data
        let error: (any Error)?
        let url: URL

        /// Prints the server's answer and reports what arrived against what was sent.
        func check(_ run: LessonRun, sent fixture: UploadFile) -> AttemptResult {
            if let error { return .failed(error) }
            let text = String(decoding: answer, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            run.log("server answered: \(text)")
            guard status == 200 else { return .failed(DownloadError.httpStatus(status, url: url.absoluteString)) }
            guard let decoded = try? JSONDecoder().decode(UploadAnswer.self, from: answer) else {
                return .failed(URLError(.cannotParseResponse))
            }
            run.verify(decoded, part: "file", sent: fixture)
            return .finished
        }
    }

    func send(_ makeTask: (URLSession) -> URLSessionTask) -> Finished {
        let session = run.makeSession(delegate: self, delegateQueue: BoundedOperationQueue(capacity: 64))
        makeTask(session).resume()
        done.wait()
        session.finishTasksAndInvalidate()
        return Finished(status: status, answer: answer, error: error, url: run.url)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        run.progress.update(received: totalBytesSent, expected: bodyBytes)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
        answerStarted = .now
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard error == nil else { return }
        guard answer.count + data.count <= Self.longestAnswer, answerStarted.map({ .now - $0 <= Self.slowestAnswer }) ?? true
        else {
            error = DownloadError.answerTooLong(bytes: Int64(answer.count + data.count), limit: Int64(Self.longestAnswer),
                                               seconds: Self.slowestAnswer.seconds)
            return dataTask.cancelAtOnce()
        }
        answer.append(data)  // a one-line JSON answer; small whatever the upload's size
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        self.error = self.error ?? error
        done.signal()
    }
}
