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
    /// gives up on a connection that sends nothing for `--idle-timeout` seconds.
    public func makeSession(delegate: any URLSessionDataDelegate, delegateQueue: OperationQueue) -> URLSession {
        URLSession(configuration: .lab, delegate: InspectingDelegate(forwardingTo: delegate, recordingIn: exchangeLog),
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
    /// delegate, which on Linux hears the response and each chunk of a completion-handler task.
    public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        let recorder = ExchangeRecorder(log.entry(for: request))
        do {
            return try await URLSession.shared.data(for: request, delegate: recorder)
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

    /// `URLSession.shared.bytes(for:)` (see `URLSession.AsyncBytes`), seen by the inspector.
    public func bytes(for request: URLRequest) async throws -> (URLSession.AsyncBytes, URLResponse) {
        try await URLSession.AsyncBytes.start(request, configuration: .lab) { [log] in
            InspectingDelegate(forwardingTo: $0, recordingIn: log)
        }
    }
}

/// The task delegate that records one completion-handler task's exchange as it happens.
private final class ExchangeRecorder: NSObject, URLSessionDataDelegate, Sendable {
    let exchange: HTTPExchangeLog.Entry

    init(_ exchange: HTTPExchangeLog.Entry) { self.exchange = exchange }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        exchange.received(response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange.received(bodyBytes: data.count)
    }
}

/// Records each task's exchange, then passes the callback on to the lesson's delegate. Callbacks the
/// delegate does not implement reach Foundation's defaults (`.allow`, follow the redirect).
private final class InspectingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let target: any URLSessionDataDelegate
    private let log: HTTPExchangeLog
    private let exchanges = Mutex<[Int: HTTPExchangeLog.Entry]>([:])  // by task identifier

    init(forwardingTo target: any URLSessionDataDelegate, recordingIn log: HTTPExchangeLog) {
        self.target = target
        self.log = log
    }

    /// URLSession announces a request only through its first callback, so the exchange begins there.
    private func exchange(for task: URLSessionTask) -> HTTPExchangeLog.Entry {
        exchanges.withLock { exchanges in
            if let entry = exchanges[task.taskIdentifier] { return entry }
            let entry = log.entry(for: task.originalRequest ?? URLRequest(url: URL(fileURLWithPath: "/")))
            exchanges[task.taskIdentifier] = entry
            return entry
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        exchange(for: dataTask).received(response)
        target.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(for: dataTask).received(bodyBytes: data.count)
        target.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        exchange(for: task).redirected(by: response, to: request)
        target.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request,
                           completionHandler: completionHandler)
    }

    /// Upload progress is the lesson's to show; the inspector only passes it on.
    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {
        target.urlSession(session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
                          totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { exchange(for: task).failed(reason: describe(error)) }
        target.urlSession(session, task: task, didCompleteWithError: error)
    }
}
