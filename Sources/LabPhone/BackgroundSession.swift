import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// The app's side of a background session: what `run.makeSession(configuration:delegate:delegateQueue:)`
/// hands back for a configuration made with `background(withIdentifier:)`. Its tasks run in the
/// transfer service; this object asks the service for them and delivers their events to the
/// delegate, as Apple's session does in the app's process. It is a `LabURLSession`, not a
/// subclass of Foundation's (LabURLSession.swift says why).
///
/// Its contract, each point after Apple's documentation:
/// - It needs an identifier and a delegate. A completion handler, a data task or an upload from
///   memory is refused: the app ends with one line and exit 70, where Apple's raises an exception.
/// - Its tasks are downloads, and uploads from a file, which the service reads where it is: the
///   file must stay there until the task has ended.
/// - Made at launch with the identifier of an earlier session, it takes over that session's
///   tasks: `getAllTasks` lists the ones still running, and the events that waited for the app
///   are delivered, in order, once the app's launch has returned.
/// - `didFinishDownloadingTo` gets a file that is deleted as soon as the method returns.
/// - In a launch for background events, `urlSessionDidFinishEvents(forBackgroundURLSession:)`
///   follows the last of them.
/// - A second session with the same identifier gets no events (Apple calls its behaviour
///   undefined), and the story says so.
/// - Invalidated, it makes no more tasks (the app ends with one line, where Apple's raises), tells
///   the delegate every event of the tasks it has, then `didBecomeInvalidWithError(nil)`, and
///   lets go of the delegate.
final class BackgroundSession: LabURLSession, @unchecked Sendable {
    // @unchecked: URLSessionConfiguration and OperationQueue are not Sendable on every system; both
    // are set at init and never changed. The state that changes is behind a Mutex, and the
    // delegate is called on its serial queue only.
    let identifier: String
    let configuration: URLSessionConfiguration
    private let app: AppProcess
    let phone: PhoneFolder
    private let events: OperationQueue
    /// Let go of once the session is invalidated and has told its last event.
    private let heldDelegate: Mutex<(any LabURLSessionDelegate)?>
    /// Only the first session of an identifier in the app's process hears its events.
    private let hearsEvents: Bool

    private struct Tasks {
        var byID: [String: any BackgroundTask] = [:]
        var nextNumber = 1
        var invalidated = false
        var toldInvalid = false
        /// `urlSessionDidFinishEvents` is due once, in a launch for background events.
        var finishEventsDue: Bool
        /// When a task's end was last told: a busy phone (`--slow-events`) tells that the
        /// events are in only a while after it.
        var lastEndToldAt: Date?
    }
    private let tasks: Mutex<Tasks>

    var delegate: (any LabURLSessionDelegate)? { heldDelegate.withLock { $0 } }
    var delegateQueue: OperationQueue { events }
    private var downloadDelegate: (any LabURLSessionDownloadDelegate)? { delegate as? any LabURLSessionDownloadDelegate }
    private var dataDelegate: (any LabURLSessionDataDelegate)? { delegate as? any LabURLSessionDataDelegate }
    private var taskDelegate: (any LabURLSessionTaskDelegate)? { delegate as? any LabURLSessionTaskDelegate }

    init(identifier: String, configuration: URLSessionConfiguration, delegate: any LabURLSessionDelegate,
         delegateQueue: OperationQueue?, app: AppProcess) {
        self.identifier = identifier
        self.configuration = configuration
        self.app = app
        phone = app.phone
        let queue = delegateQueue ?? OperationQueue()
        queue.maxConcurrentOperationCount = delegateQueue?.maxConcurrentOperationCount ?? 1
        events = queue
        heldDelegate = Mutex(delegate)
        hearsEvents = app.sessionMade(identifier: identifier)
        let numbers = phone.records().filter { $0.session == identifier }.map(\.number)
        tasks = Mutex(Tasks(nextNumber: (numbers.max() ?? 0) + 1, finishEventsDue: app.launchedForEvents(of: identifier)))
        if hearsEvents {
            Thread { [weak self] in
                while let session = self, session.deliverEvents() { usleep(20_000) }
            }.start()
        }
    }

    // MARK: The tasks a background session allows

    func downloadTask(with request: URLRequest) -> any LabURLSessionDownloadTask { makeDownloadTask(request, for: "downloadTask(with:)") }

    private func makeDownloadTask(_ request: URLRequest, for call: String) -> BackgroundDownloadTask {
        refuseIfInvalidated(call)
        var asked = request
        // The service asks for the file as it is: a compressed body could not be resumed.
        asked.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let task = BackgroundDownloadTask(core: makeCore(asked, uploading: nil))
        tasks.withLock { $0.byID[task.core.id] = task }
        return task
    }

    /// Sends the file at `fileURL` as the request's body. The service reads it where it is, so it
    /// must stay there until the task ends.
    func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> any LabURLSessionUploadTask {
        refuseIfInvalidated("uploadTask(with:fromFile:)")
        guard fileURL.isFileURL else { app.refuse("uploadTask(with:fromFile:): \(fileURL.absoluteString) is not a file URL") }
        let task = BackgroundUploadTask(core: makeCore(request, uploading: fileURL))
        tasks.withLock { $0.byID[task.core.id] = task }
        return task
    }

    private func makeCore(_ request: URLRequest, uploading file: URL?) -> BackgroundTaskCore {
        let number = tasks.withLock { tasks in
            defer { tasks.nextNumber += 1 }
            return tasks.nextNumber
        }
        return BackgroundTaskCore(id: UUID().uuidString, number: number, request: request, uploadFile: file, session: self)
    }

    /// Continues a task that failed with resume data: the service's partial file goes on.
    func downloadTask(withResumeData resumeData: Data) -> any LabURLSessionDownloadTask {
        guard let blob = try? JSONDecoder().decode(BackgroundResumeData.self, from: resumeData), let url = URL(string: blob.url) else {
            app.refuse("downloadTask(withResumeData:): this is not resume data of a background session")
        }
        let task = makeDownloadTask(URLRequest(url: url), for: "downloadTask(withResumeData:)")
        task.core.resumesFrom = blob.task
        return task
    }

    func downloadTask(with request: URLRequest,
                      completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void) -> any LabURLSessionDownloadTask {
        app.refuse(Self.noCompletionHandlers)
    }

    func dataTask(with request: URLRequest,
                  completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> any LabURLSessionDataTask {
        app.refuse(Self.noCompletionHandlers)
    }

    func dataTask(with request: URLRequest) -> any LabURLSessionDataTask { app.refuse(Self.noDataTasks) }
    func uploadTask(with request: URLRequest, from bodyData: Data) -> any LabURLSessionUploadTask {
        app.refuse("uploadTask(with:from:): a background session uploads from a file only: use uploadTask(with:fromFile:)")
    }

    static let noCompletionHandlers = "completion handler blocks are not supported in background sessions: use a delegate instead"
    static let noDataTasks = "data tasks are not supported in background sessions: use a download task and a delegate"

    /// Apple's raises "Task created in a session that has been invalidated".
    private func refuseIfInvalidated(_ call: String) {
        guard tasks.withLock({ $0.invalidated }) else { return }
        app.refuse("\(call): this session has been invalidated, and makes no more tasks: make a new session")
    }

    func getAllTasks(completionHandler: @escaping @Sendable ([any LabURLSessionTask]) -> Void) {
        let running = runningTasks()
        events.addOperation { completionHandler(running) }
    }

    /// The system woke the app for this session's events: `urlSessionDidFinishEvents` follows them.
    func expectFinishEvents() { tasks.withLock { $0.finishEventsDue = true } }

    /// Its tasks go on, and their events are told; then the delegate hears
    /// `didBecomeInvalidWithError(nil)` and is let go of.
    func finishTasksAndInvalidate() {
        tasks.withLock { $0.invalidated = true }
    }

    /// Its running tasks are cancelled, and their ends told; then as `finishTasksAndInvalidate`.
    func invalidateAndCancel() {
        for task in runningTasks() { task.cancel() }
        tasks.withLock { $0.invalidated = true }
    }

    /// The tasks the app made and the service has not finished, and those it still runs for an
    /// earlier launch of the app.
    private func runningTasks() -> [any LabURLSessionTask] {
        adoptEarlierTasks()
        return tasks.withLock { $0.byID.values.filter { $0.state == .running }.sorted { $0.taskIdentifier < $1.taskIdentifier } }
    }

    /// Whether nothing is left for this session to do: every task ended and told, and no
    /// `urlSessionDidFinishEvents` that the phone still holds back.
    var isIdle: Bool {
        guard hearsEvents else { return true }
        if tasks.withLock({ $0.finishEventsDue && app.holdsFinishEvents(after: $0.lastEndToldAt) }) { return false }
        return everyTaskTold
    }

    /// No task is left that has not ended and been told. An invalidated session is let go of
    /// then, whether or not its events' end was told.
    private var everyTaskTold: Bool {
        guard hearsEvents else { return true }
        if tasks.withLock({ $0.byID.values.contains { !$0.core.told } }) { return false }
        return !phone.records().contains { $0.session == identifier && !isTold($0.id) }
    }

    // MARK: Asking the service

    func send(_ request: ServiceRequest) {
        do {
            try request.send(to: phone)
        } catch {
            app.refuse("cannot reach the transfer service in \(phone.requests.path): \(describe(error))")
        }
    }

    // MARK: Delivering events

    private func adoptEarlierTasks() {
        let records = phone.records().filter { $0.session == identifier && !isTold($0.id) }
        tasks.withLock { tasks in
            for record in records where tasks.byID[record.id] == nil {
                let core = BackgroundTaskCore(adopting: record, session: self)
                tasks.byID[record.id] = record.upload == nil ? BackgroundDownloadTask(core: core) : BackgroundUploadTask(core: core)
            }
        }
    }

    /// One round: progress of running tasks, then each ended task's events. False once the
    /// session is invalidated and has nothing left to tell.
    private func deliverEvents() -> Bool {
        guard app.launchHasReturned, !app.wakePending, !app.eventsHeldBack else { return true }
        adoptEarlierTasks()
        let records = Dictionary(phone.records().filter { $0.session == identifier }.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let live = tasks.withLock { $0.byID.values.filter { !$0.core.told }.sorted { $0.taskIdentifier < $1.taskIdentifier } }
        var toldSomething = false
        for task in live {
            let core = task.core
            guard let record = records[core.id] else { continue }
            core.update(from: record)
            if let download = task as? BackgroundDownloadTask {
                tellProgress(of: download, record: record)
            } else if let upload = task as? BackgroundUploadTask {
                tellProgress(of: upload, record: record)
            }
            guard record.state.hasEnded else { continue }
            if record.state == .downloaded, let download = task as? BackgroundDownloadTask { handOver(phone.finishedFile(record.id), of: download) }
            if record.state == .uploaded, let upload = task as? BackgroundUploadTask { tellAnswer(phone.answerFile(record.id), of: upload) }
            let error = self.error(for: record)
            deliver { self.taskDelegate?.urlSession(self, task: task, didCompleteWithError: error) }
            if let handler = (task as? BackgroundDownloadTask)?.takeResumeDataHandler() {
                let resumeData = (error as? URLError)?.downloadTaskResumeData
                deliver { handler.call(resumeData) }
            }
            core.told = true
            toldSomething = true
            markTold(record)
            if record.state == .downloaded { HandOverStep.taskForgotten.reached(in: phone) }
        }
        let finishEvents: Bool = tasks.withLock { tasks in
            if toldSomething { tasks.lastEndToldAt = Date() }
            guard tasks.finishEventsDue, !app.holdsFinishEvents(after: tasks.lastEndToldAt), !tasks.byID.values.contains(where: { !$0.core.told && $0.state != .running }) else { return false }
            let anythingEnded = !tasks.byID.values.contains { $0.state == .running } || tasks.lastEndToldAt != nil
            guard anythingEnded else { return false }
            tasks.finishEventsDue = false
            return true
        }
        if finishEvents {
            // Marked first: the app may call the system's handler from inside the method.
            app.finishedEvents(of: identifier)
            deliver { self.delegate?.urlSessionDidFinishEvents(forBackgroundURLSession: self) }
        }
        deliveredOnce.store(true, ordering: .releasing)
        return !tellInvalidOnceIdle()
    }

    /// Once invalidated with nothing left to tell: `didBecomeInvalidWithError(nil)`, once, and the
    /// delegate let go of, as Apple's session does. True when that is done.
    private func tellInvalidOnceIdle() -> Bool {
        guard tasks.withLock({ $0.invalidated }), everyTaskTold else { return false }
        let first = tasks.withLock { tasks in
            defer { tasks.toldInvalid = true }
            return !tasks.toldInvalid
        }
        if first {
            deliver { self.delegate?.urlSession(self, didBecomeInvalidWithError: nil) }
            heldDelegate.withLock { $0 = nil }
        }
        return true
    }

    /// `didWriteData` for the bytes the service's file has grown by since the last round.
    private func tellProgress(of task: BackgroundDownloadTask, record: TransferRecord) {
        let onDisk = PartialFile.size(of: record.state == .downloaded ? phone.finishedFile(record.id) : phone.partialFile(record.id))
        guard onDisk > task.core.reported, record.state != .failed, record.state != .cancelled else { return }
        let (written, before) = (onDisk - task.core.reported, task.core.reported)
        task.core.reported = onDisk
        deliver {
            self.downloadDelegate?.urlSession(self, downloadTask: task, didWriteData: written, totalBytesWritten: before + written,
                                              totalBytesExpectedToWrite: record.expected)
        }
    }

    /// `didSendBodyData` for the bytes the service has sent since the last round.
    private func tellProgress(of task: BackgroundUploadTask, record: TransferRecord) {
        guard let sent = record.sent, sent > task.core.reported, record.state != .failed, record.state != .cancelled else { return }
        let (now, before) = (sent - task.core.reported, task.core.reported)
        task.core.reported = sent
        deliver {
            self.taskDelegate?.urlSession(self, task: task, didSendBodyData: now, totalBytesSent: before + now,
                                          totalBytesExpectedToSend: record.toSend ?? -1)
        }
    }

    /// `didReceive` with the server's answer to an upload, 64 KiB at a time, as a data task hears
    /// a body.
    private func tellAnswer(_ file: URL, of task: BackgroundUploadTask) {
        guard OutputFile.isRegularFile(file), let handle = try? FileHandle(forReadingFrom: file) else { return }
        defer { try? handle.close() }
        while let chunk = try? handle.read(upToCount: 64 << 10), !chunk.isEmpty {
            deliver { self.dataDelegate?.urlSession(self, dataTask: task, didReceive: chunk) }
        }
    }

    /// A first round of events is done: what waited for the app has been told.
    var hasDeliveredOnce: Bool { !hearsEvents || deliveredOnce.load(ordering: .acquiring) }
    private let deliveredOnce = Atomic(false)

    /// `didFinishDownloadingTo` with a link to the service's file in the app's temporary folder,
    /// removed when the method returns. The service's own file goes only once the task is told,
    /// so a kill of the app in the middle delivers it again at the next launch.
    private func handOver(_ file: URL, of task: BackgroundDownloadTask) {
        let location = phone.appTemporary.appendingPathComponent("CFNetworkDownload_\(task.core.id.prefix(8)).tmp")
        try? FileManager.default.removeItem(at: location)
        do {
            try FileManager.default.linkItem(at: file, to: location)
        } catch {
            app.say("cannot hand the file over: \(describe(error))")
            return
        }
        HandOverStep.linkedForTheApp.reached(in: phone)
        deliver { self.downloadDelegate?.urlSession(self, downloadTask: task, didFinishDownloadingTo: location) }
        HandOverStep.delegateReturned.reached(in: phone)
        // Counted once the method has returned: an app that dies inside it gets the file again.
        app.handedOver()
        HandOverStep.handOverCounted.reached(in: phone)
        if FileManager.default.fileExists(atPath: location.path) {
            app.say("the system deletes \(location.lastPathComponent): didFinishDownloadingTo has returned")
            try? FileManager.default.removeItem(at: location)
        }
    }

    private func error(for record: TransferRecord) -> (any Error)? {
        switch record.state {
        case .failed:
            var info: [String: Any] = [NSLocalizedDescriptionKey: record.errorMessage ?? "the transfer failed"]
            // A network failure leaves bytes worth resuming; a disk that refused them does not.
            if record.failure == .network, let blob = resumeData(for: record) { info[downloadTaskResumeDataKey] = blob }
            return URLError(URLError.Code(rawValue: record.errorCode ?? URLError.unknown.rawValue) ?? .unknown, userInfo: info)
        case .cancelled:
            var info: [String: Any] = [NSLocalizedDescriptionKey: record.errorMessage ?? "cancelled"]
            if let reason = record.cancelledReason { info[NSURLErrorBackgroundTaskCancelledReasonKey] = reason }
            if record.keptForResume == true, let blob = resumeData(for: record) { info[downloadTaskResumeDataKey] = blob }
            return URLError(.cancelled, userInfo: info)
        default:
            return nil
        }
    }

    /// The blob that names `record`'s partial file, when it holds bytes that can be resumed.
    private func resumeData(for record: TransferRecord) -> Data? {
        guard PartialFile.size(of: phone.partialFile(record.id)) > 0, ResumeState.load(for: phone.partialFile(record.id)) != nil else { return nil }
        return try? JSONEncoder().encode(BackgroundResumeData(task: record.id, url: record.url))
    }

    /// A download that failed, or was cancelled for resume data, keeps its record and partial
    /// file, which its resume data names; any other task is gone once told.
    private func markTold(_ record: TransferRecord) {
        if (record.state == .failed && record.upload == nil) || record.keptForResume == true {
            _ = FileManager.default.createFile(atPath: told(record.id).path, contents: nil)
        } else {
            phone.forget(record.id)
        }
    }

    private func told(_ id: String) -> URL { phone.tasks.appendingPathComponent(id + ".told") }
    private func isTold(_ id: String) -> Bool { FileManager.default.fileExists(atPath: told(id).path) }

    /// Runs `call` on the delegate queue, later.
    func onDelegateQueue(_ call: @escaping @Sendable () -> Void) { events.addOperation(call) }

    /// Runs `call` on the delegate queue and waits for it to return.
    private func deliver(_ call: @escaping @Sendable () -> Void) {
        let operation = BlockOperation(block: call)
        events.addOperations([operation], waitUntilFinished: true)
    }
}

extension BackgroundSession {
    var appIsInBackground: Bool { app.inBackground }
    var appTappedStart: Bool { app.settings.pressStart }
}
