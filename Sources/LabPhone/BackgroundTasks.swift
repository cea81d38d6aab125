import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// What a failed background task's resume data holds: the service's task whose partial file the
/// next task continues. Opaque to the app, as Apple's is.
struct BackgroundResumeData: Codable {
    var task: String
    var url: String
}

/// What a background task keeps, of either kind, as the app sees it: its state follows the
/// service's record of it.
final class BackgroundTaskCore: @unchecked Sendable {
    // @unchecked: the state that changes is behind a Mutex or an atomic, or touched by the
    // session's event thread alone (`told`), or set before `resume()` (`resumesFrom`).
    let id: String
    let number: Int
    let request: URLRequest
    /// The file an upload task sends; nil for a download task.
    let uploadFile: URL?
    private weak var owner: BackgroundSession?
    var resumesFrom: String?
    /// Bytes told to the delegate so far, received or sent; read from any thread.
    private let reportedBytes = Atomic<Int64>(0)
    var reported: Int64 {
        get { reportedBytes.load(ordering: .relaxed) }
        set { reportedBytes.store(newValue, ordering: .relaxed) }
    }
    var told = false

    private struct Shared {
        var state: URLSessionTask.State
        var record: TransferRecord?
    }
    private let shared: Mutex<Shared>

    init(id: String, number: Int, request: URLRequest, uploadFile: URL?, session: BackgroundSession) {
        self.id = id
        self.number = number
        self.request = request
        self.uploadFile = uploadFile
        owner = session
        shared = Mutex(Shared(state: .suspended))
    }

    /// A task the service runs for an earlier launch of the app.
    init(adopting record: TransferRecord, session: BackgroundSession) {
        id = record.id
        number = record.number
        var request = URLRequest(url: URL(string: record.url) ?? URL(fileURLWithPath: "/"))
        request.httpMethod = record.upload?.method
        request.allHTTPHeaderFields = record.upload?.headers
        self.request = request
        uploadFile = record.upload.map { URL(fileURLWithPath: $0.file) }
        owner = session
        shared = Mutex(Shared(state: record.state.hasEnded ? .completed : .running, record: record))
    }

    var session: BackgroundSession? { owner }

    func update(from record: TransferRecord) {
        shared.withLock { shared in
            shared.record = record
            if record.state.hasEnded { shared.state = .completed }
        }
    }

    var state: URLSessionTask.State { shared.withLock { $0.state } }
    var record: TransferRecord? { shared.withLock { $0.record } }

    var response: URLResponse? {
        guard let record, let status = record.status, let url = URL(string: record.responseURL ?? record.url) else { return nil }
        return HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: record.responseHeaders)
    }

    /// Asks the service for the task, once.
    func resume() {
        guard let owner else { return }
        let first: Bool = shared.withLock { shared in
            guard shared.state == .suspended else { return false }
            shared.state = .running
            return true
        }
        guard first else { return }
        CrashAtStart.strikeIfArmed(.crashAtStart, in: owner.phone)
        var record = TransferRecord(id: id, number: number, session: owner.identifier, url: request.url?.absoluteString ?? "",
                                    state: .running)
        record.upload = uploadFile.map {
            TransferRecord.Upload(file: $0.standardizedFileURL.path, method: request.httpMethod ?? "POST", headers: request.allHTTPHeaderFields ?? [:])
        }
        owner.send(ServiceRequest(kind: .create, task: record, resumeFrom: resumesFrom, inBackground: owner.appIsInBackground,
                                  askedByUser: owner.appTappedStart))
        CrashAtStart.strikeIfArmed(.crashAfterStart, in: owner.phone)
    }

    /// Marks the task as cancelling; true when it was running, and the service must be asked.
    func startCancelling() -> Bool {
        shared.withLock { shared in
            defer { if shared.state != .completed { shared.state = .canceling } }
            return shared.state == .running
        }
    }

    func cancel() {
        if startCancelling() { owner?.send(ServiceRequest(kind: .cancel, taskID: id)) }
    }
}

/// A background session's task, of either kind: its core, which the session reads.
protocol BackgroundTask: LabURLSessionTask {
    var core: BackgroundTaskCore { get }
}

extension BackgroundTask {
    var taskIdentifier: Int { core.number }
    var originalRequest: URLRequest? { core.request }
    var currentRequest: URLRequest? { core.request }
    var state: URLSessionTask.State { core.state }
}

/// A background session's download task.
final class BackgroundDownloadTask: LabURLSessionDownloadTask, BackgroundTask, Sendable {
    let core: BackgroundTaskCore

    init(core: BackgroundTaskCore) {
        self.core = core
    }

    var countOfBytesReceived: Int64 { core.reported }
    var countOfBytesExpectedToReceive: Int64 { core.record?.expected ?? -1 }
    var countOfBytesSent: Int64 { 0 }
    var countOfBytesExpectedToSend: Int64 { 0 }
    var response: URLResponse? { core.response }
    func resume() { core.resume() }
    func cancel() { core.cancel() }
    func suspend() {}

    /// Stops the task and hands back resume data, once the service has stopped it: the same
    /// blob as a failed task's error carries, which `downloadTask(withResumeData:)` continues.
    /// The handler runs on the delegate queue after `didCompleteWithError`; nil for a task that
    /// is not running.
    func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        let handler = ResumeDataHandler(completionHandler)
        let wasRunning = core.startCancelling()
        guard let owner = core.session else { return }
        guard wasRunning else { return owner.onDelegateQueue { handler.call(nil) } }
        resumeDataHandler.withLock { $0 = handler }
        owner.send(ServiceRequest(kind: .cancelByProducingResumeData, taskID: core.id))
    }

    /// The handler of `cancel(byProducingResumeData:)`, taken once.
    func takeResumeDataHandler() -> ResumeDataHandler? {
        resumeDataHandler.withLock { handler in
            defer { handler = nil }
            return handler
        }
    }
    private let resumeDataHandler = Mutex<ResumeDataHandler?>(nil)
}

/// A background session's upload task: from a file only.
final class BackgroundUploadTask: LabURLSessionUploadTask, BackgroundTask, Sendable {
    let core: BackgroundTaskCore

    init(core: BackgroundTaskCore) {
        self.core = core
    }

    var countOfBytesReceived: Int64 { 0 }
    var countOfBytesExpectedToReceive: Int64 { -1 }
    var countOfBytesSent: Int64 { core.reported }
    var countOfBytesExpectedToSend: Int64 { core.record?.toSend ?? -1 }
    var response: URLResponse? { core.response }
    func resume() { core.resume() }
    func cancel() { core.cancel() }
    func suspend() {}
}
