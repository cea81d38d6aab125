import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// What `run.makeSession(configuration:delegate:delegateQueue:)` hands lesson 09's app for a
/// configuration that is not a background one: Foundation's own URLSession, whose transfers run
/// in the app's process and end with it. It holds that session and hands its events on under
/// the names lesson 09's app uses (`LabURLSession`), each task wrapped once. It also holds the
/// transfer at each point of the life script until the phone has played it.
final class InProcessSession: LabURLSession, @unchecked Sendable {
    // @unchecked: URLSessionConfiguration and OperationQueue are not Sendable on every system;
    // they, and Foundation's session, are set at init and never changed. The task map is behind
    // a Mutex.
    private let foundation: URLSession
    private let events: InProcessEvents
    private let wrapped = Mutex<[Int: any LabURLSessionTask]>([:])
    let delegate: (any LabURLSessionDelegate)?

    init(configuration: URLSessionConfiguration, delegate: (any LabURLSessionDelegate)?, delegateQueue: OperationQueue?,
         phone: PhoneFolder, exchangeLog: HTTPExchangeLog) {
        self.delegate = delegate
        events = InProcessEvents(points: LifePoints(phone))
        foundation = URLSession(configuration: configuration,
                                delegate: inspecting(events, recordingIn: exchangeLog), delegateQueue: delegateQueue)
        events.session = self
    }

    var configuration: URLSessionConfiguration { foundation.configuration }
    var delegateQueue: OperationQueue { foundation.delegateQueue }

    func downloadTask(with request: URLRequest) -> any LabURLSessionDownloadTask {
        wrap(InProcessDownloadTask(foundation.downloadTask(with: request)))
    }

    func downloadTask(withResumeData resumeData: Data) -> any LabURLSessionDownloadTask {
        wrap(InProcessDownloadTask(foundation.downloadTask(withResumeData: resumeData)))
    }

    func downloadTask(with request: URLRequest,
                      completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void) -> any LabURLSessionDownloadTask {
        let ending = TaskEnding()
        let task = wrap(InProcessDownloadTask(foundation.downloadTask(with: request) { location, response, error in
            completionHandler(location, response, error)
            ending.ended()
        }))
        ending.set(task)
        return task
    }

    func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> any LabURLSessionUploadTask {
        wrap(InProcessUploadTask(foundation.uploadTask(with: request, fromFile: fileURL)))
    }

    func uploadTask(with request: URLRequest, from bodyData: Data) -> any LabURLSessionUploadTask {
        wrap(InProcessUploadTask(foundation.uploadTask(with: request, from: bodyData)))
    }

    func dataTask(with request: URLRequest) -> any LabURLSessionDataTask {
        wrap(InProcessDataTask(foundation.dataTask(with: request)))
    }

    func dataTask(with request: URLRequest,
                  completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> any LabURLSessionDataTask {
        let ending = TaskEnding()
        let task = wrap(InProcessDataTask(foundation.dataTask(with: request) { data, response, error in
            completionHandler(data, response, error)
            ending.ended()
        }))
        ending.set(task)
        return task
    }

    func getAllTasks(completionHandler: @escaping @Sendable ([any LabURLSessionTask]) -> Void) {
        foundation.getAllTasks { tasks in completionHandler(tasks.compactMap { self.wrapper(of: $0) }) }
    }

    func finishTasksAndInvalidate() { foundation.finishTasksAndInvalidate() }
    func invalidateAndCancel() { foundation.invalidateAndCancel() }

    private func wrap<Task: InProcessTask & LabURLSessionTask>(_ task: Task) -> Task {
        wrapped.withLock { $0[task.foundationTask.taskIdentifier] = task }
        return task
    }

    /// The app's task for one of Foundation's: task identifiers are unique within a session.
    func wrapper(of task: URLSessionTask) -> (any LabURLSessionTask)? {
        wrapped.withLock { $0[task.taskIdentifier] }
    }
}

/// Foundation's events for an `InProcessSession`, handed on to the app's delegate with its tasks.
private final class InProcessEvents: NSObject, URLSessionDownloadDelegate, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: `session` is set once, in the session's init, before any task exists.
    weak var session: InProcessSession?
    private let points: LifePoints

    init(points: LifePoints) { self.points = points }

    private func told(_ task: URLSessionTask) -> (InProcessSession, any LabURLSessionTask)? {
        guard let session, let wrapper = session.wrapper(of: task) else { return nil }
        return (session, wrapper)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        // Before the app hears of these bytes: at a point, the app stops where the script says.
        points.pass(received: totalBytesWritten, of: totalBytesExpectedToWrite)
        guard case let (app, task)? = told(downloadTask), let task = task as? any LabURLSessionDownloadTask else { return }
        (app.delegate as? any LabURLSessionDownloadDelegate)?.urlSession(app, downloadTask: task, didWriteData: bytesWritten,
                                                                         totalBytesWritten: totalBytesWritten,
                                                                         totalBytesExpectedToWrite: totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        AppProcess.current?.handedOver()
        guard case let (app, task)? = told(downloadTask), let task = task as? any LabURLSessionDownloadTask else { return }
        (app.delegate as? any LabURLSessionDownloadDelegate)?.urlSession(app, downloadTask: task, didFinishDownloadingTo: location)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        guard case let (app, task)? = told(downloadTask), let task = task as? any LabURLSessionDownloadTask else { return }
        (app.delegate as? any LabURLSessionDownloadDelegate)?.urlSession(app, downloadTask: task, didResumeAtOffset: fileOffset,
                                                                         expectedTotalBytes: expectedTotalBytes)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard case let (app, task)? = told(dataTask), let task = task as? any LabURLSessionDataTask else { return }
        (app.delegate as? any LabURLSessionDataDelegate)?.urlSession(app, dataTask: task, didReceive: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                    totalBytesExpectedToSend: Int64) {
        guard case let (app, task)? = told(task) else { return }
        (app.delegate as? any LabURLSessionTaskDelegate)?.urlSession(app, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
                                                                     totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard case let (app, task)? = told(task) else { return }
        (app.delegate as? any LabURLSessionTaskDelegate)?.urlSession(app, task: task, didCompleteWithError: error)
        // After the app's delegate: a task it starts from here is counted before this one ends.
        (task as? InProcessTask)?.ended()
    }

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        guard let app = self.session else { return }
        app.delegate?.urlSession(app, didBecomeInvalidWithError: error)
    }
}

/// One of Foundation's tasks, as lesson 09's app sees it: every call and value is the task's own.
class InProcessTask: @unchecked Sendable {
    // @unchecked: Foundation's tasks are Sendable; this holds one and nothing else. Each kind is
    // a subclass of this one, never of Foundation's.
    let foundationTask: URLSessionTask
    /// Whether this task is in `running`: resumed, and neither suspended nor ended since.
    private let counted = Mutex(false)

    /// The app's tasks that are resumed and have not ended: its process ends only once none is.
    static let running = Atomic(0)

    init(_ task: URLSessionTask) { foundationTask = task }

    /// Its completion has been told to the app.
    func ended() { uncount() }

    private func uncount() {
        let wasCounted = counted.withLock { counted in
            defer { counted = false }
            return counted
        }
        if wasCounted { Self.running.subtract(1, ordering: .releasing) }
    }

    var taskIdentifier: Int { foundationTask.taskIdentifier }
    var originalRequest: URLRequest? { foundationTask.originalRequest }
    var currentRequest: URLRequest? { foundationTask.currentRequest }
    var response: URLResponse? { foundationTask.response }
    var state: URLSessionTask.State { foundationTask.state }
    var countOfBytesReceived: Int64 { foundationTask.countOfBytesReceived }
    var countOfBytesExpectedToReceive: Int64 { foundationTask.countOfBytesExpectedToReceive }
    var countOfBytesSent: Int64 { foundationTask.countOfBytesSent }
    var countOfBytesExpectedToSend: Int64 { foundationTask.countOfBytesExpectedToSend }
    func resume() {
        let wasCounted = counted.withLock { counted in
            defer { counted = true }
            return counted
        }
        let phone = wasCounted ? nil : AppProcess.current?.phone
        if let phone { CrashAtStart.strikeIfArmed(.crashAtStart, in: phone) }
        if !wasCounted { Self.running.add(1, ordering: .releasing) }
        foundationTask.resume()
        if let phone { CrashAtStart.strikeIfArmed(.crashAfterStart, in: phone) }
    }

    func suspend() {
        foundationTask.suspend()
        uncount()
    }
    func cancel() { foundationTask.cancel() }
}

final class InProcessDownloadTask: InProcessTask, LabURLSessionDownloadTask, @unchecked Sendable {
    init(_ task: URLSessionDownloadTask) { super.init(task) }

    func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        (foundationTask as? URLSessionDownloadTask)?.cancel(byProducingResumeData: completionHandler)
    }
}

final class InProcessDataTask: InProcessTask, LabURLSessionDataTask, @unchecked Sendable {
    init(_ task: URLSessionDataTask) { super.init(task) }
}

final class InProcessUploadTask: InProcessTask, LabURLSessionUploadTask, @unchecked Sendable {
    init(_ task: URLSessionUploadTask) { super.init(task) }
}

/// Ends the count of a task made with a completion handler, which Foundation calls instead of
/// the delegate: the handler is made before the task it belongs to.
private final class TaskEnding: Sendable {
    private let task = Mutex<InProcessTask?>(nil)

    func set(_ made: InProcessTask) { task.withLock { $0 = made } }

    func ended() { task.withLock { $0 }?.ended() }
}
