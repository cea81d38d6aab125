import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

extension LessonRun {
    /// `URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: delegateQueue)`,
    /// with the lab's network inspector between the session and `delegate`: every callback reaches
    /// `delegate` unchanged, and the exchange lands in the run's record and story. The session
    /// gives up on a connection that sends nothing for `--idle-timeout` seconds. Without a
    /// `delegateQueue` the session gets a serial one, as URLSession makes, that holds at most 64
    /// callbacks (`BoundedOperationQueue`): URLSession on Linux hands a delegate every chunk at
    /// once, and a slow delegate must slow the sender instead of filling memory.
    public func makeSession(delegate: any URLSessionDataDelegate, delegateQueue: OperationQueue?) -> URLSession {
        URLSession(configuration: .lab, delegate: InspectingDelegate(forwardingTo: delegate, recordingIn: exchangeLog),
                   delegateQueue: delegateQueue ?? BoundedOperationQueue(capacity: 64))
    }

    /// The same, for download tasks. On Linux the session is LabKit's `ResumableDownloadSession`,
    /// whose download tasks keep Apple's resume data contract; on Apple's systems it is a plain
    /// `URLSession`. Without a `delegateQueue`, the session makes a serial one (on Linux a bounded
    /// one, so a slow delegate slows the sender).
    public func makeSession(delegate: any URLSessionDownloadDelegate, delegateQueue: OperationQueue?) -> URLSession {
        SessionWithResumeData(configuration: .lab, delegate: InspectingDelegate(forwardingTo: delegate, recordingIn: exchangeLog),
                              delegateQueue: delegateQueue)
    }

    /// `URLSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue)`
    /// for a lesson whose configuration is part of the lesson (10: its URL cache and cache
    /// policy), inspected as above and given the lab's idle time-out.
    public func makeSession(configuration: URLSessionConfiguration, delegate: any URLSessionDataDelegate,
                            delegateQueue: OperationQueue?) -> URLSession {
        configuration.timeoutIntervalForRequest = TransferLimits.active.idleSeconds
        return URLSession(configuration: configuration, delegate: InspectingDelegate(forwardingTo: delegate, recordingIn: exchangeLog),
                          delegateQueue: delegateQueue ?? BoundedOperationQueue(capacity: 64))
    }

    /// The same, for download tasks (on Linux, LabKit's `ResumableDownloadSession` as above).
    public func makeSession(configuration: URLSessionConfiguration, delegate: any URLSessionDownloadDelegate,
                            delegateQueue: OperationQueue?) -> URLSession {
        configuration.timeoutIntervalForRequest = TransferLimits.active.idleSeconds
        return SessionWithResumeData(configuration: configuration,
                                     delegate: InspectingDelegate(forwardingTo: delegate, recordingIn: exchangeLog),
                                     delegateQueue: delegateQueue)
    }

    /// `URLSession.shared`, for completion-handler calls, seen by the lab's network inspector.
    public var sharedSession: InspectedSharedSession { InspectedSharedSession(log: exchangeLog) }
}

/// `URLSession.shared` with the completion-handler call the small-file lesson uses. On Linux a
/// session's delegate hears nothing about completion-handler tasks, so the handler is wrapped.
public struct InspectedSharedSession: Sendable {
    let log: HTTPExchangeLog

    public func dataTask(
        with request: URLRequest,
        completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        let exchange = log.entry(for: request)
        return URLSession.shared.dataTask(with: request) { data, response, error in
            if let response { exchange.received(response) }
            if let data { exchange.received(bodyBytes: data.count) }
            if let error { exchange.failed(reason: describe(error)) }
            completionHandler(data, response, error)
        }
    }
}

extension InspectedSharedSession {
    /// `URLSession.shared.data(for:)`. The exchange is recorded as it happens, through a task
    /// delegate, where the system tells one (Linux does); what it did not hear is recorded when
    /// the call returns.
    public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        let recorder = ExchangeRecorder(log.entry(for: request))
        do {
            let (data, response) = try await URLSession.shared.data(for: request, delegate: recorder)
            recorder.returned(response, bodyBytes: data.count)
            return (data, response)
        } catch {
            recorder.exchange.failed(reason: describe(error))
            throw error
        }
    }

    /// `URLSession.shared.data(from:)`, recorded as above.
    public func data(from url: URL) async throws -> (Data, URLResponse) {
        try await data(for: URLRequest(url: url))
    }

    /// `URLSession.shared.download(for:)`. A download task tells a task delegate nothing that the
    /// lab could record without changing it (a download delegate there makes Foundation write
    /// every chunk to the file twice), so the exchange is recorded when the call returns.
    public func download(for request: URLRequest) async throws -> (URL, URLResponse) {
        let exchange = log.entry(for: request)
        do {
            let (location, response) = try await URLSession.shared.download(for: request)
            exchange.received(response)
            exchange.received(bodyBytes: Int(PartialFile.size(of: location)))
            return (location, response)
        } catch {
            exchange.failed(reason: describe(error))
            throw error
        }
    }

    /// `URLSession.shared.bytes(for:)`, Apple's (on Linux, LabKit's fill-in), seen by the
    /// inspector as far as the system lets it (`inspectedBytes`, in FoundationSeam.swift).
    public func bytes(for request: URLRequest) async throws -> (URLSession.AsyncBytes, URLResponse) {
        try await inspectedBytes(for: request, configuration: .lab, log: log) { [log] in
            InspectingDelegate(forwardingTo: $0, recordingIn: log)
        }
    }

    /// `URLSession.shared.bodyChunks(for:)` (LabKit's, see `BodyChunks`), seen by the inspector.
    public func bodyChunks(for request: URLRequest) async throws -> (BodyChunks, URLResponse) {
        try await BodyChunks.start(request, configuration: .lab) { [log] in
            InspectingDelegate(forwardingTo: $0, recordingIn: log)
        }
    }
}

/// The task delegate that records one completion-handler task's exchange as it happens.
private final class ExchangeRecorder: NSObject, URLSessionDataDelegate, Sendable {
    let exchange: HTTPExchangeLog.Entry
    /// What was recorded as it happened: whether the response was, and how many body bytes; and
    /// whether the call has returned, after which the body's count is settled.
    private let heard = Mutex((response: false, bodyBytes: 0, settled: false))

    init(_ exchange: HTTPExchangeLog.Entry) { self.exchange = exchange }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let news = heard.withLock { heard in
            defer { heard.response = true }
            return !heard.response
        }
        if news { exchange.received(response) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // A callback can come after the call has returned (they run on a queue of their own, which a
        // busy machine delays): by then `returned` has counted its bytes, which must not come twice.
        let news = heard.withLock { heard in
            guard !heard.settled else { return false }
            heard.bodyBytes += data.count
            return true
        }
        if news { exchange.received(bodyBytes: data.count) }
    }

    /// The call has returned `response` and a body of `bodyBytes`: what no callback told yet is
    /// recorded now, and callbacks still on their way count for nothing.
    func returned(_ response: URLResponse, bodyBytes: Int) {
        let (responded, counted) = heard.withLock { heard in
            defer { (heard.response, heard.settled) = (true, true) }
            return (heard.response, heard.bodyBytes)
        }
        if !responded { exchange.received(response) }
        if bodyBytes > counted { exchange.received(bodyBytes: bodyBytes - counted) }
    }
}

/// Records each task's exchange, then passes the callback on to the lesson's delegate: the data,
/// download and task callbacks the lessons use (response and body, progress both ways, redirects,
/// a streamed body, the end). Those the delegate does not implement get Foundation's defaults
/// (`.allow`, follow the redirect, no body stream); the others (challenges, metrics) are not
/// passed on, and Foundation handles them as it does for a delegate without them.
///
/// The delegate's methods are reached through references typed as optionals. On Apple's systems
/// they are optional Objective-C requirements, and a reference to one the delegate lacks is nil;
/// on Linux they are plain requirements with default implementations, and a reference is never
/// nil. The one spelling compiles on both.
/// `target`, with every exchange its session makes recorded in `log`: for the phone's sessions.
package func inspecting(_ target: any URLSessionDelegate, recordingIn log: HTTPExchangeLog) -> any URLSessionDelegate {
    InspectingDelegate(forwardingTo: target, recordingIn: log)
}

final class InspectingDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, Sendable {
    private let target: any URLSessionDelegate
    private let log: HTTPExchangeLog

    /// What is recorded of one task: its place in the log, the response recorded last, and the
    /// body bytes counted so far.
    private struct Recording {
        let entry: HTTPExchangeLog.Entry
        var response: URLResponse?
        var bodyBytes: Int64 = 0
    }
    private let recordings = Mutex<[Int: Recording]>([:])  // by task identifier

    init(forwardingTo target: any URLSessionDelegate, recordingIn log: HTTPExchangeLog) {
        self.target = target
        self.log = log
    }

    private var taskDelegate: (any URLSessionTaskDelegate)? { target as? any URLSessionTaskDelegate }
    private var dataDelegate: (any URLSessionDataDelegate)? { target as? any URLSessionDataDelegate }
    private var downloadDelegate: (any URLSessionDownloadDelegate)? { target as? any URLSessionDownloadDelegate }

    /// URLSession announces a request only through its first callback, so the exchange begins there.
    /// A data task's `response` is recorded whenever it is a new one (Foundation on Linux hands its
    /// delegate an interim `100 Continue` before the final answer); a download task's, read from
    /// the task, only the first time; `change` may count body bytes.
    @discardableResult
    private func record(_ task: URLSessionTask, response: URLResponse? = nil,
                        _ change: (inout Recording) -> Void = { _ in }) -> HTTPExchangeLog.Entry {
        let (entry, newResponse, bytes): (HTTPExchangeLog.Entry, URLResponse?, Int64) = recordings.withLock { recordings in
            var recording = recordings[task.taskIdentifier] ?? Recording(entry: log.entry(
                for: task.currentRequest ?? task.originalRequest ?? URLRequest(url: URL(fileURLWithPath: "/"))))
            let bytesBefore = recording.bodyBytes
            change(&recording)
            let isNew = task is URLSessionDownloadTask ? recording.response == nil : response !== recording.response
            let newResponse = isNew ? response : nil
            if let newResponse { recording.response = newResponse }
            recordings[task.taskIdentifier] = recording
            return (recording.entry, newResponse, recording.bodyBytes - bytesBefore)
        }
        if let newResponse { entry.received(newResponse) }
        if bytes > 0 { entry.received(bodyBytes: Int(bytes)) }
        return entry
    }

    /// Whether a callback has begun `task`'s exchange.
    private func isRecorded(_ task: URLSessionTask) -> Bool {
        recordings.withLock { $0[task.taskIdentifier] != nil }
    }

    // MARK: Data tasks

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        record(dataTask, response: response)
        let forward: ((URLSession, URLSessionDataTask, URLResponse, @escaping @Sendable (URLSession.ResponseDisposition) -> Void) -> Void)?
            = dataDelegate?.urlSession(_:dataTask:didReceive:completionHandler:)
        guard let forward else { return completionHandler(.allow) }
        forward(session, dataTask, response, completionHandler)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        record(dataTask) { $0.bodyBytes += Int64(data.count) }
        let forward: ((URLSession, URLSessionDataTask, Data) -> Void)? = dataDelegate?.urlSession(_:dataTask:didReceive:)
        forward?(session, dataTask, data)
    }

    /// Forwarded, so that a lesson's delegate decides what is cached, as it would without the
    /// inspector. Apple's sessions ask it for a cacheable response ("Accessing cached data"); on
    /// Linux nothing asks (docs/lesson-runtime.md), and the session's answer is what is stored.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                    completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        let forward: ((URLSession, URLSessionDataTask, CachedURLResponse, @escaping @Sendable (CachedURLResponse?) -> Void) -> Void)?
            = dataDelegate?.urlSession(_:dataTask:willCacheResponse:completionHandler:)
        guard let forward else { return completionHandler(proposedResponse) }
        forward(session, dataTask, proposedResponse, completionHandler)
    }

    // MARK: Download tasks

    // A download task tells no delegate about its response: it is read from the task.

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        record(downloadTask, response: downloadTask.response)
        let forward: ((URLSession, URLSessionDownloadTask, Int64, Int64) -> Void)?
            = downloadDelegate?.urlSession(_:downloadTask:didResumeAtOffset:expectedTotalBytes:)
        forward?(session, downloadTask, fileOffset, expectedTotalBytes)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        record(downloadTask, response: downloadTask.response) { $0.bodyBytes += bytesWritten }
        let forward: ((URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void)?
            = downloadDelegate?.urlSession(_:downloadTask:didWriteData:totalBytesWritten:totalBytesExpectedToWrite:)
        forward?(session, downloadTask, bytesWritten, totalBytesWritten, totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        record(downloadTask, response: downloadTask.response)
        downloadDelegate?.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
    }

    // MARK: Every task

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        record(task).redirected(by: response, to: request)
        let forward: ((URLSession, URLSessionTask, HTTPURLResponse, URLRequest, @escaping @Sendable (URLRequest?) -> Void) -> Void)?
            = taskDelegate?.urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)
        guard let forward else { return completionHandler(request) }
        forward(session, task, response, request, completionHandler)
    }

    /// Upload progress is the lesson's to show; the inspector passes it on, and samples the memory held.
    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        // An upload's body, held whole in memory, is resident while it is sent.
        if totalBytesSent >> 20 != (totalBytesSent - bytesSent) >> 20 { ResidentPeak.sample() }
        let forward: ((URLSession, URLSessionTask, Int64, Int64, Int64) -> Void)?
            = taskDelegate?.urlSession(_:task:didSendBodyData:totalBytesSent:totalBytesExpectedToSend:)
        forward?(session, task, bytesSent, totalBytesSent, totalBytesExpectedToSend)
    }

    /// A streamed upload's body comes from the lesson's delegate.
    func urlSession(_ session: URLSession, task: URLSessionTask,
                    needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        let forward: ((URLSession, URLSessionTask, @escaping @Sendable (InputStream?) -> Void) -> Void)?
            = taskDelegate?.urlSession(_:task:needNewBodyStream:)
        guard let forward else { return completionHandler(nil) }
        forward(session, task, completionHandler)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // A task cancelled before it asked for anything (one made from resume data, then dropped)
        // sent no request: there is no exchange to record.
        let cancelledUnsent = (error as? URLError)?.code == .cancelled && !isRecorded(task) && task.response == nil
        if !cancelledUnsent {
            // A download task's bytes after a Pause reach no delegate: the task's count has them.
            let isDownload = task is URLSessionDownloadTask
            let entry = record(task, response: isDownload ? task.response : nil) { recording in
                if isDownload { recording.bodyBytes = max(recording.bodyBytes, task.countOfBytesReceived) }
            }
            if let error { entry.failed(reason: describe(error)) }
        }
        let forward: ((URLSession, URLSessionTask, (any Error)?) -> Void)? = taskDelegate?.urlSession(_:task:didCompleteWithError:)
        forward?(session, task, error)
    }

    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        let forward: ((URLSession, (any Error)?) -> Void)? = target.urlSession(_:didBecomeInvalidWithError:)
        forward?(session, error)
    }
}
