import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// The system's transfer service, as lesson 09 models Apple's: it runs the background sessions'
/// download and upload tasks in a process of its own, so they go on while the app is suspended,
/// ended or relaunched. This file holds the service and its downloads; `ServiceUpload` the uploads.
///
/// Its contract, each point after Apple's documentation:
/// - Its state is on disk and written whole (`TransferRecord`, and `PartialFile`'s sidecar before
///   the first byte of a response), so a `kill -9` at any moment loses nothing: started again,
///   it resumes every transfer it owned, with `Range` and `If-Range`.
/// - It retries network failures itself, resuming where the file ends, up to `attempts` times;
///   a failure it gives up on keeps the partial file, and the error carries resume data.
/// - It follows redirects, and asks for the file as it is (`Accept-Encoding: identity`).
/// - A task created while the app ran in the background waits out the rate limiter's delay.
/// - A force-quit cancels every task of the app with its reason, and the phone relaunches nothing.
/// - It ends when the phone that started it has gone.
final class TransferService: @unchecked Sendable {
    // @unchecked: the transfers are touched on the service's one loop thread, and each transfer's
    // own state on the thread of its current attempt; `transfers` is behind a Mutex.
    private let phone: PhoneFolder
    private let console: Console
    private let exchangeLog = HTTPExchangeLog()
    private let transfers = Mutex<[String: any ServiceTask]>([:])

    /// How many times a network failure is tried again before the task fails with resume data.
    static let attempts = 5
    /// The rate limiter, scaled down: Apple's first delay was measured at 60 s, doubling with each
    /// relaunch in the background; the lab's is 1 s, doubling the same way.
    static let rateLimiterBaseSeconds = 1.0

    private init(phone: PhoneFolder, console: Console) {
        self.phone = phone
        self.console = console
    }

    /// The service process: never returns.
    static func main(_ settings: PhoneSettings) -> Never {
        PhoneRole.phone = settings.phoneProcess
        signal(SIGPIPE, SIG_IGN)
        // Past a file size limit a write fails with EFBIG, which the task reports, instead of
        // the signal ending the service (and the system starting it again, to be ended again).
        signal(SIGXFSZ, SIG_IGN)
        let console = Console(storyToStandardError: settings.storyToStandardError, quiet: settings.quiet)
        SimulatedDisk.writeDelayMicroseconds.store(settings.writeDelayMicroseconds, ordering: .relaxed)
        if let capacity = settings.diskCapacity { SimulatedDisk.capacity.store(Int(capacity), ordering: .relaxed) }
        TransferLimits.active = settings.limits
        let service = TransferService(phone: settings.folder, console: console)
        service.exchangeLog.observe { event in
            if let line = ExchangeStory.line(for: event) { console.line("  service:" + line.drop { $0 == " " }.prepending(" ")) }
        }
        do {
            try settings.folder.make()
            try String(getpid()).write(to: settings.folder.servicePID, atomically: true, encoding: .utf8)
        } catch {
            Console.error("transfer service: \(describe(error))")
            exit(ExitStatus.localIOFailed.rawValue)
        }
        LifePoints.beforeWaiting.withLock { $0 = { service.saveExchanges() } }
        service.recover()
        var rounds = 0
        while PhoneRole.phoneIsAlive {
            service.carryOutRequests()
            service.startTasksWhoseDelayIsOver()
            rounds += 1
            if rounds % 20 == 0 { service.saveExchanges() }
            usleep(10_000)
        }
        service.saveExchanges()
        exit(0)
    }

    private func say(_ line: String) { console.line("  service: " + line) }

    /// The service's exchanges, for the phone's record of the run.
    func saveExchanges() {
        reportPeakMemory(role: "service", in: phone)
        let exchanges = exchangeLog.exchanges
        guard !exchanges.isEmpty else { return }
        try? writeWhole(exchanges, to: phone.root.appendingPathComponent("exchanges-service-\(getpid()).json"))
    }

    /// One line per task created, appended whole: what the phone counts.
    private func journal(_ record: TransferRecord, askedByUser: Bool) {
        guard let line = try? JSONEncoder().encode(CreatedTask(id: record.id, askedByUser: askedByUser, at: Date())) else { return }
        let file = phone.root.appendingPathComponent("service/created.jsonl")
        if !FileManager.default.fileExists(atPath: file.path) { _ = FileManager.default.createFile(atPath: file.path, contents: nil) }
        guard OutputFile.isSoleRegularFile(file) else { return }  // a planted link, symbolic or hard, is not written through
        guard let handle = try? FileHandle(forWritingTo: file) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: line + Data("\n".utf8))
    }

    /// After a start, or a restart after a crash: every task that was running runs again, from
    /// where its partial file ends. Files of tasks with no record are swept.
    private func recover() {
        let records = phone.records()
        let known = Set(records.map(\.id) + records.compactMap(\.continues))
        for name in (try? FileManager.default.contentsOfDirectory(atPath: phone.tasks.path)) ?? [] {
            let id = String(name.prefix { $0 != "." })
            let file = phone.tasks.appendingPathComponent(name)
            // Only a regular file of a task the service no longer knows: never a folder or a link.
            if PhoneFolder.isTaskID(id), !known.contains(id), OutputFile.isRegularFile(file) { try? FileManager.default.removeItem(at: file) }
        }
        for record in records where !record.state.hasEnded { takeOverPartialFile(of: record) }
        for var record in records where record.state == .running {
            // Killed between the rename and the record: the file is whole.
            if PartialFile.size(of: phone.finishedFile(record.id)) > 0 || FileManager.default.fileExists(atPath: phone.finishedFile(record.id).path) {
                record.state = .downloaded
                try? writeWhole(record, to: phone.record(record.id))
                continue
            }
            say(record.upload == nil
                ? "task \(record.number) of \(record.session) was running: it goes on from byte \(PartialFile.size(of: phone.partialFile(record.id)))"
                : "upload task \(record.number) of \(record.session) was running: it is sent again from its start")
            start(record)
        }
    }

    private func carryOutRequests() {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: phone.requests.path)) ?? []).sorted()
        for name in names where name.hasSuffix(".json") {
            let file = phone.requests.appendingPathComponent(name)
            if let request = readWhole(ServiceRequest.self, from: file) { carryOut(request) }
            // Carried out before it is removed: a kill in between carries it out again, and each
            // request is idempotent.
            try? FileManager.default.removeItem(at: file)
        }
    }

    private func carryOut(_ request: ServiceRequest) {
        switch request.kind {
        case .create:
            guard var record = request.task, PhoneFolder.isTaskID(record.id), URL(string: record.url)?.scheme.map({ ["http", "https"].contains($0.lowercased()) }) == true,
                  TransferRecord.read(from: phone.record(record.id)) == nil else { return }
            // An upload names its file by an absolute path, and is never continued.
            if let upload = record.upload, !upload.file.hasPrefix("/") || request.resumeFrom != nil || upload.method.isEmpty { return }
            if let old = request.resumeFrom, PhoneFolder.isTaskID(old), let oldRecord = TransferRecord.read(from: phone.record(old)),
               oldRecord.url == record.url {
                // Resume data names a failed task: its partial file goes on here. The record says so
                // first, so a crash before the move finishes it at the restart.
                record.continues = old
                record.expected = oldRecord.expected
                // What the app's task shows if the file turns out whole already (a 416 then).
                (record.status, record.responseURL, record.responseHeaders) = (oldRecord.status, oldRecord.responseURL, oldRecord.responseHeaders)
            }
            let delay = request.inBackground ? rateLimiterDelay() : 0
            if delay > 0 {
                record.state = .waiting
                record.notBefore = Date().addingTimeInterval(delay)
                say("task \(record.number) was created in the background: the rate limiter holds it \(String(format: "%g", delay)) s")
            } else {
                record.state = .running
            }
            do {
                try writeWhole(record, to: phone.record(record.id))
            } catch {
                say("cannot keep task \(record.number): \(describe(error))")
                return
            }
            journal(record, askedByUser: request.askedByUser)
            takeOverPartialFile(of: record)
            if record.state == .running { start(record) }
        case .cancel, .cancelByProducingResumeData:
            guard let id = request.taskID, PhoneFolder.isTaskID(id) else { return }
            cancel(id, reason: nil, message: "cancelled", keepingPartialFile: request.kind == .cancelByProducingResumeData)
        case .forceQuit:
            let live = phone.records().filter { !$0.state.hasEnded }
            if !live.isEmpty { say("the user force-quit the app: \(live.count) task\(live.count == 1 ? "" : "s") cancelled, and the app is not relaunched") }
            for record in live {
                cancel(record.id, reason: NSURLErrorCancelledReasonUserForceQuitApplication,
                       message: "cancelled: the user force-quit the app")
            }
        }
    }

    /// The delay before a task created in the background may start: nothing after a launch by the
    /// user; then 1 s, doubled with every relaunch in the background since (the phone counts them).
    private func rateLimiterDelay() -> TimeInterval {
        let relaunches = readWhole(Int.self, from: phone.root.appendingPathComponent("service/background-launches.json")) ?? 0
        guard relaunches > 0 else { return 0 }
        return Self.rateLimiterBaseSeconds * pow(2, Double(min(relaunches, 16) - 1))
    }

    /// Moves the partial file and its sidecar of the task `record` continues, if they are still
    /// there, and forgets that task. Idempotent: a restart does it again.
    private func takeOverPartialFile(of record: TransferRecord) {
        guard let old = record.continues, PhoneFolder.isTaskID(old) else { return }
        if OutputFile.isRegularFile(phone.partialFile(old)) {
            try? FileManager.default.removeItem(at: phone.partialFile(record.id))
            try? FileManager.default.moveItem(at: phone.partialFile(old), to: phone.partialFile(record.id))
            ResumeState.remove(for: phone.partialFile(record.id))
            try? FileManager.default.moveItem(at: ResumeState.sidecar(for: phone.partialFile(old)),
                                              to: ResumeState.sidecar(for: phone.partialFile(record.id)))
        }
        phone.forget(old)
    }

    private func startTasksWhoseDelayIsOver() {
        let now = Date()
        for var record in phone.records() where record.state == .waiting && (record.notBefore ?? now) <= now {
            record.state = .running
            try? writeWhole(record, to: phone.record(record.id))
            start(record)
        }
    }

    private func start(_ record: TransferRecord) {
        guard let url = URL(string: record.url) else { return }
        let ended: @Sendable (String) -> Void = { [weak self] id in
            _ = self?.transfers.withLock { $0.removeValue(forKey: id) }
        }
        let task: any ServiceTask = record.upload == nil
            ? ServiceTransfer(record: record, url: url, phone: phone, log: exchangeLog, say: say, ended: ended)
            : ServiceUpload(record: record, url: url, phone: phone, log: exchangeLog, say: say, ended: ended)
        transfers.withLock { $0[record.id] = task }
        task.start()
    }

    /// Stops a task and records it as cancelled. Its partial file goes, unless the app asked for
    /// resume data: then it stays for the task the resume data makes.
    private func cancel(_ id: String, reason: Int?, message: String, keepingPartialFile: Bool = false) {
        guard var record = TransferRecord.read(from: phone.record(id)), !record.state.hasEnded else { return }
        transfers.withLock { $0.removeValue(forKey: id) }?.stop()
        record.state = .cancelled
        record.errorCode = URLError.cancelled.rawValue
        record.errorMessage = message
        record.cancelledReason = reason
        if keepingPartialFile {
            record.keptForResume = true
            say("task \(record.number) cancelled for resume data: its \(ByteFormat.grouped(PartialFile.size(of: phone.partialFile(id)))) bytes stay")
        }
        try? writeWhole(record, to: phone.record(id))
        guard !keepingPartialFile else { return }
        try? FileManager.default.removeItem(at: phone.partialFile(id))
        ResumeState.remove(for: phone.partialFile(id))
    }
}

/// One task's transfer in the service: lesson 04's corrected logic, with `PartialFile`'s resume
/// rules, over `CurlExchange` on a thread of its own, tried again after network failures.
private final class ServiceTransfer: ServiceTask, @unchecked Sendable {
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

extension TransferService {
    /// A network failure, a server that sent another version mid-way, or a file left short of its
    /// total: the service tries again. An answer such as a 404 is final.
    static func isWorthRetrying(_ error: any Error) -> Bool {
        if let error = error as? DownloadError {
            switch error {
            case .partialFileReplaced: return true
            case .lengthMismatch(let expected, let received): return received < expected
            default: return false
            }
        }
        return error is URLError
    }

    /// How long the service waits before its next try, after `tries` tries.
    static func wait(after tries: Int) -> TimeInterval { 0.2 * pow(2, Double(tries - 1)) }
}

/// A task the service runs: a download (`ServiceTransfer`) or an upload (`ServiceUpload`).
protocol ServiceTask: AnyObject, Sendable {
    func start()
    /// Cancelled, or the app force-quit: the task stops at once and says nothing more.
    func stop()
}
