import Foundation
import LabKit
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
    /// Another app's exchanges (`OtherApp`): told in the story, never the run's, which are the
    /// lesson's app's.
    private let otherAppsExchangeLog = HTTPExchangeLog()
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
        for (log, teller) in [(service.exchangeLog, "service:"), (service.otherAppsExchangeLog, "service, for another app:")] {
            log.observe { event in
                if let line = ExchangeStory.line(for: event) { console.line("  " + teller + line.drop { $0 == " " }.prepending(" ")) }
            }
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
        // What the lesson's app asked for: another app's tasks are not its own.
        guard !OtherApp.owns(record) else { return }
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
            // The app's tasks: another app's go on.
            let live = phone.appRecords().filter { !$0.state.hasEnded }
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
        let log = OtherApp.owns(record) ? otherAppsExchangeLog : exchangeLog
        let task: any ServiceTask = record.upload == nil
            ? ServiceTransfer(record: record, url: url, phone: phone, log: log, say: say, ended: ended)
            : ServiceUpload(record: record, url: url, phone: phone, log: log, say: say, ended: ended)
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
    static func wait(after tries: Int) -> TimeInterval { 0.05 * pow(2, Double(tries - 1)) }
}

/// A task the service runs: a download (`ServiceTransfer`) or an upload (`ServiceUpload`).
protocol ServiceTask: AnyObject, Sendable {
    func start()
    /// Cancelled, or the app force-quit: the task stops at once and says nothing more.
    func stop()
}
