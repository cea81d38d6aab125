import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Lesson 09's app: what an iOS app's delegate and its Start button do, as the phone calls them.
/// Each call comes on the main queue, as UIKit makes it.
public protocol BackgroundApp: AnyObject {
    /// `application(_:didFinishLaunchingWithOptions:)`: every launch, by the user or by the system.
    func didFinishLaunching()
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`: the system launched
    /// or woke the app because a background session has events for it. Call `completionHandler`
    /// on the main queue once the session has delivered them
    /// (`urlSessionDidFinishEvents(forBackgroundURLSession:)`).
    func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping @Sendable () -> Void)
    /// The user taps Start.
    func startTapped()
}

/// Who makes lesson 09's sessions: the app's process on the lab's phone (LabPhone), which
/// sets itself as the run's `appSessions` when it launches the app.
package protocol AppSessions: Sendable {
    func makeSession(configuration: URLSessionConfiguration, delegate: (any LabURLSessionDelegate)?,
                     delegateQueue: OperationQueue?, exchangeLog: HTTPExchangeLog) -> any LabURLSession
}

extension LessonRun {
    /// `URLSession(configuration:delegate:delegateQueue:)` for lesson 09's app. A configuration
    /// from `background(withIdentifier:)` gives the lab's `BackgroundSession`, whose tasks the
    /// transfer service runs, on every system: Apple's daemon would not relaunch a command-line
    /// program. Any other gives Foundation's URLSession in the app's own process, which ends with
    /// it (`InProcessSession`). Both are `LabURLSession`s: LabURLSession.swift says why.
    public func makeSession(configuration: URLSessionConfiguration, delegate: (any LabURLSessionDelegate)?,
                            delegateQueue: OperationQueue?) -> any LabURLSession {
        guard let appSessions else {
            preconditionFailure("makeSession(configuration:delegate:delegateQueue:) is lesson 09's, for its app's process")
        }
        return appSessions.makeSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue,
                                       exchangeLog: exchangeLog)
    }
}
