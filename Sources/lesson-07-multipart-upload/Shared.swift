/// Lesson 07: what both variants use.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// The text field both variants send beside the file.
enum TextField {
    static let name = "note"
    static let value = "sent by lesson-07-multipart-upload"
}

// MARK: - The exchange, shared by both variants

/// Sends one request with a body, shows its progress from `didSendBodyData`, and collects the answer.
final class UploadExchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the callbacks run one at a time on the serial delegate queue, and send() sets
    // the state before the task starts.
    private let run: LessonRun
    /// The body's length, for the progress: URLSession knows none for a stream (it says -1).
    private let bodyBytes: Int64
    /// A streamed upload's body, from its start; nil for a body URLSession already has.
    private let bodyStream: (@Sendable () -> InputStream?)?
    private var status = 0
    private var answer = Data()
    private var answerStarted: ContinuousClock.Instant?
    private var error: (any Error)?
    private var completion: (@Sendable (Finished) -> Void)?
    /// The lab server answers in a few hundred bytes; a server whose answer never ends is given up
    /// on past these, instead of being held in memory for ever.
    static let longestAnswer = 1 << 20
    static let slowestAnswer = Duration.seconds(30)

    init(_ run: LessonRun, bodyBytes: Int64, bodyStream: (@Sendable () -> InputStream?)? = nil) {
        self.run = run
        self.bodyBytes = bodyBytes
        self.bodyStream = bodyStream
    }

    struct Finished: Sendable {
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

    /// Starts the task `makeTask` makes; `completion` gets the answer when the task ends.
    func send(_ makeTask: (URLSession) -> URLSessionTask, completion: @escaping @Sendable (Finished) -> Void) {
        self.completion = completion
        let session = run.makeSession(delegate: self, delegateQueue: nil)
        makeTask(session).resume()
    }

    /// The body streams handed out, closed when the task ends: a writer still waiting for room
    /// then stops.
    private var bodyStreamsHandedOut: [InputStream] = []

    func urlSession(_ session: URLSession, task: URLSessionTask,
                    needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        let stream = bodyStream?()
        if let stream { bodyStreamsHandedOut.append(stream) }
        completionHandler(stream)
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
        for stream in bodyStreamsHandedOut { stream.close() }
        // A session keeps its delegate alive until it is invalidated.
        session.finishTasksAndInvalidate()
        let completion = self.completion
        self.completion = nil
        completion?(Finished(status: status, answer: answer, error: self.error, url: run.url))
    }
}
