/// Exercise 07: the article's code from Sources/lesson-07-multipart-upload/main.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 07   build this and run it against the lab server
///     swift run lab exercise hint 07    a hint for the first check that fails
///     swift run lab exercise watch 07   check again on every save
///     swift run lab exercise reset 07   back to this starting code
///
/// Read Lessons/07-multipart-upload.md next to this file. This file was made by `lab exercise reset`.
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
    ArticleUpload(run)
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
