import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// One upload task in the transfer service: the app's file sent with `uploadTask(with:fromFile:)`,
/// read where the app keeps it, as Apple's service reads it, over `CurlExchange` on a thread of
/// its own.
///
/// Its contract:
/// - An upload cannot be resumed: a network failure sends the whole body again, up to
///   `TransferService.attempts` times, and so does a restart after the service was killed.
/// - The server's answer is kept in `<id>.answer`, at most `answerLimit` bytes, for the app's
///   `didReceive` once the task has ended.
/// - The record holds the bytes sent, written every `progressStep`, for the app's
///   `didSendBodyData`; the life script's points are passed by the bytes sent.
final class ServiceUpload: ServiceTask, @unchecked Sendable {
    // @unchecked: one attempt runs at a time, on its own thread, and only it touches the task's
    // state; `stopped` is behind a Mutex.
    private var record: TransferRecord
    private let url: URL
    private let phone: PhoneFolder
    private let log: HTTPExchangeLog
    private let say: @Sendable (String) -> Void
    private let ended: @Sendable (String) -> Void
    private let lifePoints: LifePoints
    /// Set by `stop()`, from the service's loop, while an attempt runs on its own thread.
    private let stopped = Mutex(false)
    private var answer: FileHandle?
    private var answerBytes: Int64 = 0
    private var savedSent: Int64 = 0
    private var failure: (any Error)?
    private var tries = 0
    private var isStopped: Bool { stopped.withLock { $0 } }

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
        let file = URL(fileURLWithPath: upload.file).resolvingSymlinksInPath()
        guard OutputFile.isRegularFile(file), FileManager.default.isReadableFile(atPath: file.path) else {
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
        let body = CurlExchange.BodyFile(file: file, size: PartialFile.size(of: file))
        let thread = Thread { [request] in self.attempt(request, body: body) }
        thread.name = "upload \(record.number)"
        thread.start()
    }

    func stop() {
        stopped.withLock { $0 = true }
    }

    private func attempt(_ request: URLRequest, body: CurlExchange.BodyFile) {
        let error = CurlExchange(idleSeconds: TransferLimits.active.idleSeconds, log: log).run(
            request, body: body, isStopped: { self.isStopped },
            didSend: { sent, total in self.sent(sent, of: total) },
            didReceive: { response in self.receive(response) },
            didReceiveBody: { piece in self.receive(piece) })
        complete(error)
    }

    private func sent(_ sent: Int64, of total: Int64) {
        guard !isStopped else { return }
        record.sent = sent
        record.toSend = total
        if sent - savedSent >= Self.progressStep || sent == total {
            savedSent = sent
            try? writeWhole(record, to: phone.record(record.id))
        }
        lifePoints.pass(received: sent, of: total)
    }

    private func receive(_ response: HTTPURLResponse) -> Bool {
        record.status = response.statusCode
        record.responseURL = response.url?.absoluteString
        record.responseHeaders = response.allHeaderFields.reduce(into: [:]) { headers, field in
            headers[String(describing: field.key)] = String(describing: field.value)
        }
        return true
    }

    /// Whether to go on.
    private func receive(_ piece: UnsafeRawBufferPointer) -> Bool {
        guard let answer, failure == nil else { return true }
        answerBytes += Int64(piece.count)
        do {
            guard answerBytes <= Self.answerLimit else {
                throw DownloadError.responseTooLarge("the server's answer to the upload is longer than \(ByteFormat.grouped(Self.answerLimit)) bytes")
            }
            try answer.write(contentsOf: Data(piece))
            return true
        } catch {
            failure = error
            return false
        }
    }

    private func complete(_ error: URLError?) {
        try? answer?.close()
        answer = nil
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
