import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Lesson 09's URLSession, its tasks and its delegates: Apple's names and Apple's contract, as the
// app on the lab's phone uses them. Lesson 09's module names them `URLSession`, `URLSessionTask`,
// `URLSessionDownloadDelegate` and so on (its Shared.swift), so its code reads as an iOS app's.
//
// They are protocols, and the sessions behind them are built by composition: Apple makes its
// sessions and tasks only through their class methods, and `-[NSURLSession init]`,
// `-[NSURLSessionTask init]` and `+new` are deprecated since macOS 10.15 and iOS 13
// (NSURLSession.h), so a subclass would stand on a deprecated initializer and on behaviour Apple
// does not document. `run.makeSession(configuration:delegate:delegateQueue:)` gives one of two:
// - `BackgroundSession` for a configuration from `background(withIdentifier:)`: the lab's transfer
//   service runs its tasks, on every system (Apple's daemon would not relaunch a command-line tool);
// - `InProcessSession` for any other: Foundation's own URLSession, in the app's process, which
//   ends with the app.

/// Apple's `URLSession`, as lesson 09's app uses it.
public protocol LabURLSession: AnyObject, Sendable {
    var configuration: URLSessionConfiguration { get }
    var delegate: (any LabURLSessionDelegate)? { get }
    var delegateQueue: OperationQueue { get }

    func downloadTask(with request: URLRequest) -> any LabURLSessionDownloadTask
    func downloadTask(withResumeData resumeData: Data) -> any LabURLSessionDownloadTask
    func downloadTask(with request: URLRequest,
                      completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void) -> any LabURLSessionDownloadTask
    func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> any LabURLSessionUploadTask
    func uploadTask(with request: URLRequest, from bodyData: Data) -> any LabURLSessionUploadTask
    func dataTask(with request: URLRequest) -> any LabURLSessionDataTask
    func dataTask(with request: URLRequest,
                  completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> any LabURLSessionDataTask
    func getAllTasks(completionHandler: @escaping @Sendable ([any LabURLSessionTask]) -> Void)
    func finishTasksAndInvalidate()
    func invalidateAndCancel()
}

extension LabURLSession {
    public func downloadTask(with url: URL) -> any LabURLSessionDownloadTask { downloadTask(with: URLRequest(url: url)) }

    public func downloadTask(with url: URL,
                             completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void) -> any LabURLSessionDownloadTask {
        downloadTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    public func dataTask(with url: URL) -> any LabURLSessionDataTask { dataTask(with: URLRequest(url: url)) }

    public func dataTask(with url: URL,
                         completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void) -> any LabURLSessionDataTask {
        dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    /// Apple's: the running tasks, by kind.
    public func getTasksWithCompletionHandler(
        _ completionHandler: @escaping @Sendable ([any LabURLSessionDataTask], [any LabURLSessionUploadTask],
                                                  [any LabURLSessionDownloadTask]) -> Void) {
        getAllTasks { tasks in
            let uploads = tasks.compactMap { $0 as? any LabURLSessionUploadTask }
            let data = tasks.compactMap { $0 as? any LabURLSessionDataTask }.filter { !($0 is any LabURLSessionUploadTask) }
            completionHandler(data, uploads, tasks.compactMap { $0 as? any LabURLSessionDownloadTask })
        }
    }
}

/// Apple's `URLSessionTask`.
public protocol LabURLSessionTask: AnyObject, Sendable {
    var taskIdentifier: Int { get }
    var originalRequest: URLRequest? { get }
    var currentRequest: URLRequest? { get }
    var response: URLResponse? { get }
    var state: URLSessionTask.State { get }
    var countOfBytesReceived: Int64 { get }
    var countOfBytesExpectedToReceive: Int64 { get }
    var countOfBytesSent: Int64 { get }
    var countOfBytesExpectedToSend: Int64 { get }
    func resume()
    func suspend()
    func cancel()
}

/// Apple's `URLSessionDownloadTask`.
public protocol LabURLSessionDownloadTask: LabURLSessionTask {
    /// Apple's declaration takes a `@Sendable` handler; so does this one, on every system.
    func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void)
}

/// Apple's `URLSessionDataTask`.
public protocol LabURLSessionDataTask: LabURLSessionTask {}

/// Apple's `URLSessionUploadTask`, a data task whose request has a body.
public protocol LabURLSessionUploadTask: LabURLSessionDataTask {}

/// Apple's `URLSessionDelegate`. Every method is optional, as in Apple's protocol.
public protocol LabURLSessionDelegate: AnyObject, Sendable {
    func urlSession(_ session: any LabURLSession, didBecomeInvalidWithError error: (any Error)?)
    /// Every event that waited for the app has been delivered: call the system's completion
    /// handler now, on the main queue.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: any LabURLSession)
}

/// Apple's `URLSessionTaskDelegate`.
public protocol LabURLSessionTaskDelegate: LabURLSessionDelegate {
    func urlSession(_ session: any LabURLSession, task: any LabURLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64)
    func urlSession(_ session: any LabURLSession, task: any LabURLSessionTask, didCompleteWithError error: (any Error)?)
}

/// Apple's `URLSessionDataDelegate`.
public protocol LabURLSessionDataDelegate: LabURLSessionTaskDelegate {
    func urlSession(_ session: any LabURLSession, dataTask: any LabURLSessionDataTask, didReceive data: Data)
}

/// Apple's `URLSessionDownloadDelegate`: `didFinishDownloadingTo` is required, as in Apple's.
public protocol LabURLSessionDownloadDelegate: LabURLSessionTaskDelegate {
    func urlSession(_ session: any LabURLSession, downloadTask: any LabURLSessionDownloadTask, didFinishDownloadingTo location: URL)
    func urlSession(_ session: any LabURLSession, downloadTask: any LabURLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64)
    func urlSession(_ session: any LabURLSession, downloadTask: any LabURLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64)
}

// The optional methods: a delegate that does not implement one is not told.
extension LabURLSessionDelegate {
    public func urlSession(_ session: any LabURLSession, didBecomeInvalidWithError error: (any Error)?) {}
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: any LabURLSession) {}
}

extension LabURLSessionTaskDelegate {
    public func urlSession(_ session: any LabURLSession, task: any LabURLSessionTask, didSendBodyData bytesSent: Int64,
                           totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {}
    public func urlSession(_ session: any LabURLSession, task: any LabURLSessionTask, didCompleteWithError error: (any Error)?) {}
}

extension LabURLSessionDataDelegate {
    public func urlSession(_ session: any LabURLSession, dataTask: any LabURLSessionDataTask, didReceive data: Data) {}
}

extension LabURLSessionDownloadDelegate {
    public func urlSession(_ session: any LabURLSession, downloadTask: any LabURLSessionDownloadTask, didWriteData bytesWritten: Int64,
                           totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {}
    public func urlSession(_ session: any LabURLSession, downloadTask: any LabURLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                           expectedTotalBytes: Int64) {}
}
