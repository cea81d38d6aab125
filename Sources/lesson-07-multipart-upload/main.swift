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
/// the server receives the file two bytes longer. `CorrectedUpload` streams a correct body from a
/// file. Read Lessons/07-multipart-upload.md next to this file.
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

// MARK: - The article's version

/// The article's body, byte for byte in shape: built whole in memory, sent in one piece.
final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile() -> AttemptResult {
        let fixture: UploadFile
        let fileData: Data
        do {
            fixture = try run.writeUploadFile()
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
        return UploadExchange(run).send { session in session.uploadTask(with: request, from: body) }
            .check(run, sent: fixture)
    }
}

// MARK: - The corrected version

/// A correct body, streamed: written to a body file chunk by chunk, then sent from that file with
/// its exact Content-Length. The boundary is random and checked against the data; names are
/// escaped the way browsers do.
final class CorrectedUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile() -> AttemptResult {
        let fixture: UploadFile
        let bodyFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("download-lab", isDirectory: true)
            .appendingPathComponent("lesson-07-body-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: bodyFile) }
        let boundary: String
        do {
            fixture = try run.writeUploadFile()
            boundary = try MultipartBodyFile.write(to: bodyFile, file: run.file, fileField: "file",
                                                   fields: [(TextField.name, TextField.value)])
        } catch {
            return .failed(error)
        }
        let length = (try? FileManager.default.attributesOfItem(atPath: bodyFile.path)[.size] as? NSNumber)?.int64Value ?? 0
        var request = URLRequest(url: run.url)
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        request.setValue(String(length), forHTTPHeaderField: "Content-Length")
        run.log("body streamed to a file: \(ByteFormat.grouped(length)) bytes, boundary \(boundary)")
        return UploadExchange(run).send { session in session.uploadTask(with: request, fromFile: bodyFile) }
            .check(run, sent: fixture)
    }
}

/// Writes a multipart/form-data body to a file without holding the uploaded file in memory.
enum MultipartBodyFile {
    /// Returns the boundary used: random, and proven absent from the file's bytes (a clash, which
    /// is astronomically unlikely, means starting over with a new one).
    static func write(to body: URL, file: URL, fileField: String, fields: [(String, String)]) throws -> String {
        try FileManager.default.createDirectory(at: body.deletingLastPathComponent(), withIntermediateDirectories: true)
        while true {
            let boundary = "DownloadLab-" + (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
            if try writeOnce(to: body, boundary: boundary, file: file, fileField: fileField, fields: fields) {
                return boundary
            }
        }
    }

    /// RFC 7578 / the HTML standard: in a name or file name, `"` becomes %22, CR %0D, LF %0A.
    static func escaped(_ name: String) -> String {
        name.replacingOccurrences(of: "\"", with: "%22")
            .replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    private static func writeOnce(to body: URL, boundary: String, file: URL, fileField: String,
                                  fields: [(String, String)]) throws -> Bool {
        guard FileManager.default.createFile(atPath: body.path, contents: nil),
              let output = FileHandle(forWritingAtPath: body.path)
        else { throw DownloadError.localIO(path: body.path, reason: "cannot create the body file") }
        defer { try? output.close() }
        let input = try FileHandle(forReadingFrom: file)
        defer { try? input.close() }

        try output.write(contentsOf: Data(("--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"\(escaped(fileField))\"; filename=\"\(escaped(file.lastPathComponent))\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n").utf8))
        let needle = Data(boundary.utf8)
        var tail = Data()  // the end of the previous chunk, so a boundary split across chunks is seen
        while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
            if (tail + chunk.prefix(needle.count)).range(of: needle) != nil || chunk.range(of: needle) != nil {
                return false
            }
            tail = chunk.suffix(needle.count - 1)
            try output.write(contentsOf: chunk)
        }
        // The CRLF before each delimiter belongs to the delimiter, not to the part before it.
        var rest = ""
        for (name, value) in fields {
            rest += "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"\(escaped(name))\"\r\n\r\n\(value)"
        }
        rest += "\r\n--\(boundary)--\r\n"
        try output.write(contentsOf: Data(rest.utf8))
        return true
    }
}

// MARK: - The exchange, shared by both variants

/// Sends one upload task, shows its progress from `didSendBodyData`, and collects the answer.
final class UploadExchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the callbacks run one at a time on the serial delegate queue, and send() reads
    // the state only after `done` is signalled.
    private let run: LessonRun
    private var status = 0
    private var answer = Data()
    private var error: (any Error)?
    private let done = DispatchSemaphore(value: 0)

    init(_ run: LessonRun) { self.run = run }

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

    func send(_ makeTask: (URLSession) -> URLSessionUploadTask) -> Finished {
        let session = run.makeSession(delegate: self, delegateQueue: BoundedOperationQueue(capacity: 64))
        makeTask(session).resume()
        done.wait()
        session.finishTasksAndInvalidate()
        return Finished(status: status, answer: answer, error: error, url: run.url)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        run.progress.update(received: totalBytesSent, expected: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        status = (response as? HTTPURLResponse)?.statusCode ?? 0
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        answer.append(data)  // a one-line JSON answer; small whatever the upload's size
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        self.error = error
        done.signal()
    }
}
