import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// One task's transfer in the service: lesson 04's corrected logic, with `PartialFile`'s resume
/// rules, over `CurlExchange` on a thread of its own, tried again after network failures.
final class ServiceTransfer: ServiceTask, @unchecked Sendable {
    // @unchecked: one attempt runs at a time, on its own thread, and only it touches the
    // transfer's state; `stopped` is behind a Mutex.
    private var record: TransferRecord
    private let phone: PhoneFolder
    private let partial: PartialFile
    private let log: HTTPExchangeLog
    private let say: @Sendable (String) -> Void
    private let ended: @Sendable (String) -> Void
    private let lifePoints: LifePoints
    /// Set by `stop()`, from the service's loop, while an attempt runs on its own thread.
    private let stopped = Mutex(false)
    /// Held while a batch is written: once `stop()` has taken it, no byte more reaches the file,
    /// which the task that resume data makes may already continue.
    private let writing = Mutex(())
    private var handle: FileHandle?
    private var failure: (any Error)?
    private var tries = 0
    private var isStopped: Bool { stopped.withLock { $0 } }
    /// The body is written 256 KiB at a time, not piece by piece (libcurl hands over 16 KiB): a
    /// tenth of the writes, which on a slow disk each cost their time. While a batch is written,
    /// nothing is read: the sender waits, and memory stays flat.
    static let writeSize = 256 << 10
    private var pending = Data()
    /// Where the current response's body starts in the file.
    private var responseStart: Int64 = 0

    init(record: TransferRecord, url: URL, phone: PhoneFolder, log: HTTPExchangeLog, say: @escaping @Sendable (String) -> Void,
         ended: @escaping @Sendable (String) -> Void) {
        self.record = record
        self.phone = phone
        self.log = log
        self.say = say
        self.ended = ended
        partial = PartialFile(url: url, file: phone.partialFile(record.id), log: { say($0) }, reportProgress: { _, _ in })
        lifePoints = LifePoints(phone)
        pending.reserveCapacity(Self.writeSize + (64 << 10))
    }

    func start() {
        guard !isStopped else { return }
        // The partial file is written where it is, never through a link planted in its place,
        // symbolic or hard: such a name is removed (the file it names is left alone), and the
        // download starts over.
        let file = phone.partialFile(record.id)
        if FileManager.default.fileExists(atPath: file.path) || (try? FileManager.default.destinationOfSymbolicLink(atPath: file.path)) != nil,
           !OutputFile.isSoleRegularFile(file) {
            try? FileManager.default.removeItem(at: file)
        }
        tries += 1
        failure = nil
        let thread = Thread { self.attempt() }
        thread.name = "transfer \(record.number)"
        thread.start()
    }

    /// Cancelled, or the app force-quit: the task stops at once and says nothing more.
    func stop() {
        stopped.withLock { $0 = true }
        writing.withLock { _ in }
    }

    private func attempt() {
        let error = CurlExchange(idleSeconds: TransferLimits.active.idleSeconds, log: log).run(
            partial.nextRequest(), isStopped: { self.isStopped },
            didReceive: { response in self.receive(response) },
            didReceiveBody: { body in self.receive(body) })
        complete(error)
    }

    /// Whether to take the body.
    private func receive(_ response: HTTPURLResponse) -> Bool {
        let decision = partial.decide(response)
        switch decision {
        case .append(let offset): open(at: offset); responseStart = offset
        case .replace: open(at: 0); responseStart = 0
        case .complete: break
        case .reject(let error): failure = error
        }
        if failure == nil { failure = passedTheLimit() }
        // A 416 that says the file is whole (the service was ended after its last byte) is no
        // answer the app's task shows: the response that brought the bytes stays in the record.
        if case .complete = decision, failure == nil, record.status != nil { return true }
        if failure == nil {
            record.status = response.statusCode
            record.responseURL = response.url?.absoluteString
            record.responseHeaders = response.allHeaderFields.reduce(into: [:]) { headers, field in
                headers[String(describing: field.key)] = String(describing: field.value)
            }
            record.expected = partial.total
            // The record says what the app's task will show as its response.
            do { try writeWhole(record, to: phone.record(record.id)) } catch { failure = error }
        }
        return failure == nil
    }

    private func open(at offset: Int64) {
        do { handle = try partial.openForWriting(at: offset) } catch { failure = error }
    }

    /// Whether to go on.
    private func receive(_ body: UnsafeRawBufferPointer) -> Bool {
        guard handle != nil, failure == nil else { return true }
        pending.append(contentsOf: body)
        guard pending.count >= Self.writeSize else { return true }
        return flush()
    }

    /// Writes what has gathered since the last write; false (and `failure` set) when the disk
    /// refuses it. A kill loses at most `writeSize` bytes that were never on disk: the resume
    /// asks for them again.
    @discardableResult
    private func flush() -> Bool {
        guard let handle, !pending.isEmpty else { return true }
        defer { pending.removeAll(keepingCapacity: true) }
        do {
            let wrote = try writing.withLock { _ -> Bool in
                guard !isStopped else { return false }
                try partial.append(pending, through: handle)
                return true
            }
            guard wrote else { return true }
            if let passed = passedTheLimit() { throw passed }
            lifePoints.pass(received: partial.written, of: partial.total)
            return true
        } catch {
            failure = error
            return false
        }
    }

    /// `--max-filesize`: one response may announce, or bring, no more than it.
    private func passedTheLimit() -> DownloadError? {
        guard let limit = TransferLimits.active.maxFileSize else { return nil }
        if partial.total > limit {
            return .responseTooLarge("the server announces \(ByteFormat.grouped(partial.total)) bytes, more than --max-filesize "
                                     + ByteFormat.grouped(limit))
        }
        guard partial.written - responseStart > limit else { return nil }
        return .responseTooLarge("the server sent more than --max-filesize \(ByteFormat.grouped(limit)) bytes in one response")
    }

    /// A response that ended as announced but left the file short of its total (a 206 for part of
    /// it): the next try asks for the rest. One that passed the total is not the file.
    private func unfinished() -> DownloadError? {
        guard partial.total >= 0, partial.written != partial.total else { return nil }
        return .lengthMismatch(expected: partial.total, received: partial.written)
    }

    private func complete(_ error: URLError?) {
        if !isStopped { flush() }
        try? handle?.close()
        handle = nil
        guard !isStopped else { return }
        if let problem = failure ?? error ?? unfinished() {
            if TransferService.isWorthRetrying(problem), tries < TransferService.attempts {
                let wait = TransferService.wait(after: tries)
                say("task \(record.number): \(describe(problem)); trying again in \(String(format: "%g", wait)) s, from byte \(PartialFile.size(of: phone.partialFile(record.id)))")
                DispatchQueue.global().asyncAfter(deadline: .now() + wait) { self.start() }
                return
            }
            record.state = .failed
            record.errorCode = (problem as? URLError)?.errorCode ?? URLError.unknown.rawValue
            record.errorMessage = describe(problem)
            switch problem as? DownloadError {
            case .localIO(_, let reason)?:
                record.failure = .disk
                record.errorMessage = reason
            case .responseTooLarge(let reason)?:
                record.failure = .limit
                record.errorMessage = reason
            default:
                record.failure = exitStatus(for: problem) == .localIOFailed ? .disk : .network
            }
            say("task \(record.number) failed: \(describe(problem))")
        } else {
            do {
                if !FileManager.default.fileExists(atPath: phone.partialFile(record.id).path) {
                    _ = FileManager.default.createFile(atPath: phone.partialFile(record.id).path, contents: nil)
                }
                HandOverStep.partialFileWhole.reached(in: phone)
                // Renamed first, then the sidecar goes: a crash in between leaves the whole file,
                // which the restart finds, never a partial file without its sidecar.
                try FileManager.default.moveItem(at: phone.partialFile(record.id), to: phone.finishedFile(record.id))
                HandOverStep.renamed.reached(in: phone)
                partial.finished()
                record.state = .downloaded
                say("task \(record.number) of \(record.session) downloaded: \(ByteFormat.grouped(PartialFile.size(of: phone.finishedFile(record.id)))) bytes")
            } catch {
                record.state = .failed
                record.errorMessage = describe(error)
                record.failure = .disk
            }
        }
        try? writeWhole(record, to: phone.record(record.id))
        if record.state == .downloaded { HandOverStep.recordedDownloaded.reached(in: phone) }
        ended(record.id)
    }

}
