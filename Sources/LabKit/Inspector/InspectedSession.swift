import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

extension LessonRun {
    /// `URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: delegateQueue)`,
    /// with the lab's network inspector between the session and `delegate`: every callback reaches
    /// `delegate` unchanged, and the exchange lands in the run's record and story.
    public func makeSession(delegate: any URLSessionDataDelegate, delegateQueue: OperationQueue) -> URLSession {
        URLSession(configuration: .ephemeral, delegate: InspectingDelegate(forwardingTo: delegate),
                   delegateQueue: delegateQueue)
    }

    /// `URLSession.shared`, for completion-handler calls, seen by the lab's network inspector.
    public var sharedSession: InspectedSharedSession { InspectedSharedSession() }
}

/// `URLSession.shared` with the completion-handler call the small-file lesson uses. On Linux a
/// session's delegate hears nothing about completion-handler tasks, so the handler is wrapped.
public struct InspectedSharedSession: Sendable {
    public func dataTask(
        with request: URLRequest,
        completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        let log = HTTPExchangeLog.shared
        let exchange = log.begin(request)
        return URLSession.shared.dataTask(with: request) { data, response, error in
            if let response { log.received(exchange, response: response) }
            if let data { log.received(exchange, bodyBytes: data.count) }
            if let error { log.failed(exchange, error: error) }
            completionHandler(data, response, error)
        }
    }
}

/// Records each task's exchange, then passes the callback on to the lesson's delegate. Callbacks the
/// delegate does not implement reach Foundation's defaults (`.allow`, follow the redirect).
private final class InspectingDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let target: any URLSessionDataDelegate
    private let exchanges = Mutex<[Int: Int]>([:])  // task identifier → exchange in the log

    init(forwardingTo target: any URLSessionDataDelegate) { self.target = target }

    /// URLSession announces a request only through its first callback, so the exchange begins there.
    private func exchange(for task: URLSessionTask) -> Int {
        exchanges.withLock { exchanges in
            if let index = exchanges[task.taskIdentifier] { return index }
            let index = HTTPExchangeLog.shared.begin(task.originalRequest ?? URLRequest(url: URL(fileURLWithPath: "/")))
            exchanges[task.taskIdentifier] = index
            return index
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        HTTPExchangeLog.shared.received(exchange(for: dataTask), response: response)
        target.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        HTTPExchangeLog.shared.received(exchange(for: dataTask), bodyBytes: data.count)
        target.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        HTTPExchangeLog.shared.redirected(exchange(for: task), by: response, to: request)
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
        if let error { HTTPExchangeLog.shared.failed(exchange(for: task), error: error) }
        target.urlSession(session, task: task, didCompleteWithError: error)
    }
}
