import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// One upload task in the transfer service: the app's file sent with `uploadTask(with:fromFile:)`,
/// read where the app keeps it, as Apple's service reads it.
///
/// Its contract:
/// - An upload cannot be resumed: a network failure sends the whole body again, up to
///   `TransferService.attempts` times, and so does a restart after the service was killed.
/// - The server's answer is kept in `<id>.answer`, at most `answerLimit` bytes, for the app's
///   `didReceive` once the task has ended.
/// - The record holds the bytes sent, written every `progressStep`, for the app's
///   `didSendBodyData`; the life script's points are passed by the bytes sent.
final class ServiceUpload: NSObject, ServiceTask, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate; every callback runs on the task's serial
    // delegate queue, and `current` is behind a Mutex.
    private var record: TransferRecord
    private let url: URL
    private let phone: PhoneFolder
    private let log: HTTPExchangeLog
    private let say: @Sendable (String) -> Void
    private let ended: @Sendable (String) -> Void
    private let lifePoints: LifePoints
    private let current = Mutex<(task: URLSessionUploadTask?, stopped: Bool)>((nil, false))
    private var answer: FileHandle?
    private var answerBytes: Int64 = 0
    private var savedSent: Int64 = 0
    private var failure: (any Error)?
    private var tries = 0
    private var isStopped: Bool { current.withLock { $0.stopped } }

    /// The most of an answer the service keeps: an answer is a page of JSON, not a download.
    static let answerLimit: Int64 = 16 << 20
    static let progressStep: Int64 = 1 << 20

    init(record: TransferRecord, url: URL, phone: PhoneFolder, log: HTTPExchangeLog, say: @escaping @Sendable (String) -> Void,
         ended: @escaping @Sendable (String) -> Void) {
        self.record = record
        self.url = url
        self.phone = phone
        self.log = log
        self.say = say
        self.ended = ended
        lifePoints = LifePoints(phone)
    }

    func start() {
        guard !isStopped, let upload = record.upload else { return }
        tries += 1
        failure = nil
        answerBytes = 0
        savedSent = 0
        // Read where the app keeps it, through a link too: a file that is gone, or is no regular
        // file (a FIFO would never end, a device neither), ends the task.
        let body = URL(fileURLWithPath: upload.file).resolvingSymlinksInPath()
        guard OutputFile.isRegularFile(body), FileManager.default.isReadableFile(atPath: body.path) else {
            return finish(with: URLError(.fileDoesNotExist, userInfo: [NSLocalizedDescriptionKey: "\(upload.file): no file to upload there"]))
        }
        do {
            answer = try FileHandle(forWritingTo: phone.answerFile(record.id), at: 0)
        } catch {
            return finish(with: DownloadError.localIO(path: phone.answerFile(record.id).path, reason: systemReason(of: error)))
        }
        var request = URLRequest(url: url)
        request.httpMethod = upload.method
        for (field, value) in upload.headers { request.setValue(value, forHTTPHeaderField: field) }
        let session = URLSession(configuration: .lab, delegate: InspectingDelegate(forwardingTo: self, recordingIn: log),
                                 delegateQueue: BoundedOperationQueue(capacity: 64))
        let task = session.uploadTask(with: request, fromFile: body)
        let stoppedMeanwhile = current.withLock { current in
            if !current.stopped { current.task = task }
            return current.stopped
        }
        guard !stoppedMeanwhile else { return session.invalidateAndCancel() }
        task.resume()
    }

    func stop() {
        let task = current.withLock { current in
            current.stopped = true
            return current.task
        }
        task?.cancelAtOnce()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                    totalBytesExpectedToSend: Int64) {
        guard !isStopped else { return }
        record.sent = totalBytesSent
        record.toSend = totalBytesExpectedToSend
        if totalBytesSent - savedSent >= Self.progressStep || totalBytesSent == totalBytesExpectedToSend {
            savedSent = totalBytesSent
            try? writeWhole(record, to: phone.record(record.id))
        }
        lifePoints.pass(received: totalBytesSent, of: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if let response = response as? HTTPURLResponse {
            record.status = response.statusCode
            record.responseURL = response.url?.absoluteString
            record.responseHeaders = response.allHeaderFields.reduce(into: [:]) { headers, field in
                headers[String(describing: field.key)] = String(describing: field.value)
            }
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let answer, failure == nil, !isStopped else { return }
        answerBytes += Int64(data.count)
        do {
            guard answerBytes <= Self.answerLimit else {
                throw DownloadError.responseTooLarge("the server's answer to the upload is longer than \(ByteFormat.grouped(Self.answerLimit)) bytes")
            }
            try answer.write(contentsOf: data)
        } catch {
            failure = error
            dataTask.cancelAtOnce()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? answer?.close()
        answer = nil
        session.finishTasksAndInvalidate()
        guard !isStopped else { return }
        let problem = failure ?? error
        if let problem, TransferService.isWorthRetrying(problem), tries < TransferService.attempts {
            let wait = TransferService.wait(after: tries)
            say("upload task \(record.number): \(describe(problem)); sending it again in \(String(format: "%g", wait)) s, from its start")
            DispatchQueue.global().asyncAfter(deadline: .now() + wait) { self.start() }
            return
        }
        finish(with: problem)
    }

    /// Ends the task, failed with `problem` or answered, and tells the service.
    private func finish(with problem: (any Error)?) {
        if let problem {
            record.state = .failed
            record.errorCode = (problem as? URLError)?.errorCode ?? URLError.unknown.rawValue
            record.errorMessage = describe(problem)
            switch problem as? DownloadError {
            case .responseTooLarge?: record.failure = .limit
            case .localIO?: record.failure = .disk
            default: record.failure = .network
            }
            say("upload task \(record.number) failed: \(describe(problem))")
        } else {
            record.state = .uploaded
            say("upload task \(record.number) of \(record.session) sent \(ByteFormat.grouped(record.sent ?? 0)) bytes; "
                + "the server answered \(record.status ?? 0)")
        }
        try? writeWhole(record, to: phone.record(record.id))
        ended(record.id)
    }
}
