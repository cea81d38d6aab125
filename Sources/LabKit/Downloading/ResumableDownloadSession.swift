#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import LabVocabulary
import Synchronization

// Foundation on Linux has URLSessionDownloadTask, but its cancel(byProducingResumeData:) always
// hands back nil and its downloadTask(withResumeData:) makes a task with no request. Two
// classes fill that in under Apple's names (the task is in ResumableDownloadTask.swift): a URLSession whose download tasks keep the resume
// data contract, and the task. A lesson never names them: it gets a `URLSession` from
// `run.makeSession(delegate:delegateQueue:)` and its tasks as `URLSessionDownloadTask`s, and its
// delegate is a `URLSessionDownloadDelegate`. On Apple's systems this file is empty and the same
// code runs Apple's own session (`DownloadSession` in FoundationSeam.swift).

/// A `URLSession` whose download tasks are `ResumableDownloadTask`s. Each transfer runs as a data
/// task in a URLSession of its own, with this session's configuration, that delivers on this
/// session's delegate queue and is invalidated when the transfer ends. Until it is invalidated,
/// this session keeps its delegate alive, as a `URLSession` does.
///
/// Only the delegate-based download calls are LabKit's: `downloadTask(with:)` and
/// `downloadTask(withResumeData:)`. Every other call (a data task, a completion handler) is
/// Foundation's own.
public final class ResumableDownloadSession: URLSession, @unchecked Sendable {
    // @unchecked: URLSession is an open Foundation class marked @unchecked Sendable; the state
    // added here is behind a Mutex.

    private static let sessionsMade = Atomic<Int>(0)
    private static let lifecycleLog = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Tells `log` when a session is made and when it is invalidated: the lab's story shows a
    /// session that is never let go of. Registered once per process, as a `URLProtocol` class is.
    public static func tellLifecycle(to log: @escaping @Sendable (String) -> Void) {
        lifecycleLog.withLock { $0 = log }
    }

    private let number: Int
    private let tasksMade = Atomic<Int>(0)

    /// The tasks resumed and not yet completed, and whether the app has asked to invalidate.
    private struct Tasks {
        var running: [ObjectIdentifier: ResumableDownloadTask] = [:]
        var invalidating = false
        var invalidated = false
    }
    private let tasks = Mutex(Tasks())

    /// As `URLSession(configuration:delegate:delegateQueue:)`. Without a queue, the session makes a
    /// serial one that holds at most 64 callbacks (`BoundedOperationQueue`): a slow delegate then
    /// slows the sender instead of filling memory.
    public override init(configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?,
                         delegateQueue queue: OperationQueue?) {
        number = Self.sessionsMade.add(1, ordering: .relaxed).newValue
        super.init(configuration: configuration, delegate: delegate,
                   delegateQueue: queue ?? BoundedOperationQueue(capacity: 64))
        Self.tell("download session \(number) created")
    }

    private static func tell(_ line: String) { lifecycleLog.withLock { $0 }?(line) }

    public override func downloadTask(with url: URL) -> URLSessionDownloadTask {
        downloadTask(with: URLRequest(url: url))
    }

    public override func downloadTask(with request: URLRequest) -> URLSessionDownloadTask {
        ResumableDownloadTask(request: request, session: self, identifier: nextIdentifier())
    }

    /// A task that continues from `resumeData`. A blob that is not resume data, or whose temporary
    /// file name is not a plain file name, makes a task with no request (`originalRequest` nil)
    /// that fails when resumed, touching nothing.
    public override func downloadTask(withResumeData resumeData: Data) -> URLSessionDownloadTask {
        ResumableDownloadTask(resumeData: resumeData, session: self, identifier: nextIdentifier())
    }

    /// Lets the running tasks finish: Foundation lets go of the delegate once the last of them
    /// has completed, as Apple's session does.
    public override func finishTasksAndInvalidate() {
        guard let idle = beginInvalidating() else { return }
        if idle { super.finishTasksAndInvalidate() }
    }

    /// Cancels the running tasks; each completes cancelled, then the delegate is let go of.
    public override func invalidateAndCancel() {
        guard let idle = beginInvalidating() else { return }
        if idle { return super.invalidateAndCancel() }
        for task in tasks.withLock({ Array($0.running.values) }) { task.cancel() }
    }

    /// Nil when invalidation was asked for already; otherwise whether no task is running.
    private func beginInvalidating() -> Bool? {
        let idle: Bool? = tasks.withLock { tasks in
            guard !tasks.invalidating else { return nil }
            tasks.invalidating = true
            tasks.invalidated = tasks.running.isEmpty
            return tasks.running.isEmpty
        }
        if idle != nil { Self.tell("download session \(number) invalidated") }
        return idle
    }

    func taskStarted(_ task: ResumableDownloadTask) {
        tasks.withLock { $0.running[ObjectIdentifier(task)] = task }
    }

    /// After the task's `didCompleteWithError`: the last one to complete in an invalidated session
    /// lets Foundation let go of the delegate.
    func taskCompleted(_ task: ResumableDownloadTask) {
        let invalidateNow: Bool = tasks.withLock { tasks in
            guard tasks.running.removeValue(forKey: ObjectIdentifier(task)) != nil else { return false }
            guard tasks.invalidating, !tasks.invalidated, tasks.running.isEmpty else { return false }
            tasks.invalidated = true
            return true
        }
        if invalidateNow { super.finishTasksAndInvalidate() }
    }

    private func nextIdentifier() -> Int { tasksMade.add(1, ordering: .relaxed).newValue }

    /// A URLSession for one transfer of `receiver`, delivering on this session's delegate queue;
    /// the transfer invalidates it when it ends.
    func makeTransferSession(for receiver: any URLSessionDataDelegate) -> URLSession {
        URLSession(configuration: configuration, delegate: receiver, delegateQueue: delegateQueue)
    }

    var downloadDelegate: (any URLSessionDownloadDelegate)? { delegate as? any URLSessionDownloadDelegate }
}
#endif
