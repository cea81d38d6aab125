import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// The calls of `URLSessionDownloadDelegate` that the articles implement.
public protocol ResumableDownloadTaskDelegate: AnyObject, Sendable {
    /// A resumed task continues at `fileOffset` (0 when the server sent the whole file again).
    func downloadTask(_ task: ResumableDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64)
    func downloadTask(_ task: ResumableDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
                      totalBytesExpectedToWrite: Int64)
    /// The temporary file at `location` is deleted when this returns: move it away here.
    func downloadTask(_ task: ResumableDownloadTask, didFinishDownloadingTo location: URL)
    /// Success (nil) or failure. After a broken transfer, the error's `userInfo` carries resume
    /// data under `ResumableDownloadTask.resumeDataKey`, as on iOS.
    func downloadTask(_ task: ResumableDownloadTask, didCompleteWithError error: (any Error)?)
}

/// A download task that keeps the resume data contract on Linux, built on a data task.
///
/// Foundation on Linux has `URLSessionDownloadTask`, but `cancel(byProducingResumeData:)`
/// always hands back nil and `downloadTask(withResumeData:)` fails. This type does what iOS
/// does underneath:
/// - The body goes to a temporary file, `CFNetworkDownload_<id>.tmp` in `folder`.
/// - `cancel(byProducingResumeData:)` closes the connection, as CFNetwork does (`cancelAtOnce()`),
///   writes what was already on its way, and then hands back an Apple-format blob (`ResumeData`,
///   keyed archive): URL, bytes received, ETag or Last-Modified, temp file name.
/// - The temp file name in a blob must be a plain file name: a blob cannot name a file outside
///   `folder`.
/// - `init(resumeData:…)` resumes from such a blob: it asks for the rest with `Range` and
///   `If-Range`. A 206 that starts at the blob's offset, with the blob's validator, continues the
///   temp file (`didResumeAtOffset`); a 200 (the file changed) starts it over from byte 0. A 206
///   with another validator (a server that ignores `If-Range`) deletes the temp file and fails
///   with `DownloadError.partialFileReplaced`, carrying no resume data.
/// - A 416 whose length equals the blob's offset means the temp file is already whole.
/// - When the body is complete, `didFinishDownloadingTo` gets the temp file, which is deleted
///   as soon as the call returns, unlike Foundation's on Linux, which are never deleted.
/// - Callbacks arrive one at a time on a bounded serial queue, so a slow disk slows the sender.
public final class ResumableDownloadTask: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. The mutable state is read and written
    // under `state`'s lock; the delegate is called only from the serial delegate queue.

    /// The `userInfo` key of the resume data in a failed task's error (iOS's
    /// `NSURLSessionDownloadTaskResumeData`).
    public static let resumeDataKey = "NSURLSessionDownloadTaskResumeData"

    public let url: URL
    private let folder: URL
    private let delegate: any ResumableDownloadTaskDelegate
    private let session: ResumableDownloadSession

    /// Where the transfer is: transferring → pausing → stopped, or transferring → stopped.
    private enum Phase {
        case transferring
        /// Pause was pressed. What still arrives is written, silently, and the resume data goes to
        /// `handOver` once the transfer has really stopped, so that it covers every byte received.
        case pausing(handOver: @Sendable (Data?) -> Void)
        case stopped

        var isTransferring: Bool { if case .transferring = self { true } else { false } }
        var isStopped: Bool { if case .stopped = self { true } else { false } }
    }

    private struct State {
        var offset: Int64          // where this transfer starts in the temp file
        var written: Int64         // bytes in the temp file that belong to the resource
        var total: Int64 = -1
        var entityTag: String?
        var lastModified: String?
        var handle: FileHandle?
        var task: URLSessionDataTask?
        var response: HTTPURLResponse?
        var failure: (any Error)?
        var phase = Phase.transferring

        /// Pause pressed: true when the transfer is under way and must now be stopped.
        mutating func beginPausing(handOver: @escaping @Sendable (Data?) -> Void) -> Bool {
            guard case .transferring = phase, task != nil else { return false }
            phase = .pausing(handOver: handOver)
            return true
        }

        /// The transfer has ended, whichever way: what was going on when it did.
        mutating func stop() -> Phase {
            defer { phase = .stopped }
            return phase
        }
    }
    private let state: Mutex<State>

    /// A fresh download of `url`, with its temporary file in `folder`.
    init(url: URL, folder: URL, session: ResumableDownloadSession, delegate: any ResumableDownloadTaskDelegate) {
        self.url = url
        self.folder = folder
        self.session = session
        self.delegate = delegate
        tempFileName = Self.newTempFileName()
        state = Mutex(State(offset: 0, written: 0))
    }

    /// A download that continues from `resumeData`. The temp file it names must be in `folder`;
    /// bytes in it beyond the blob's count are cut off, as they are not vouched for.
    init(resumeData: Data, folder: URL, session: ResumableDownloadSession,
         delegate: any ResumableDownloadTaskDelegate) throws {
        let (blob, _) = try ResumeData.decode(resumeData)
        guard let url = URL(string: blob.downloadURL) else {
            throw ResumeDataError("NSURLSessionDownloadURL is not a URL: \(blob.downloadURL)")
        }
        let tempFileName = blob.tempFileName ?? Self.newTempFileName()
        // The name comes from a file anyone could have written: it must stay inside `folder`.
        guard ResumeData.isPlainFileName(tempFileName) else {
            throw ResumeDataError("the temporary file name is not a plain file name (\(tempFileName.debugDescription))")
        }
        let onDisk = PartialFile.size(of: folder.appendingPathComponent(tempFileName))
        let offset = min(blob.bytesReceived, onDisk)
        self.url = url
        self.folder = folder
        self.session = session
        self.delegate = delegate
        self.tempFileName = tempFileName
        state = Mutex(State(offset: offset, written: offset,
                            entityTag: blob.entityTag, lastModified: blob.serverDownloadDate))
    }

    /// `CFNetworkDownload_<id>.tmp`, or the name the resume data gave; always a plain file name.
    private let tempFileName: String
    public var tempFile: URL { folder.appendingPathComponent(tempFileName) }

    private static func newTempFileName() -> String { "CFNetworkDownload_\(UUID().uuidString.prefix(8)).tmp" }

    /// The response to the latest request, once it has arrived.
    public var response: HTTPURLResponse? { state.withLock { $0.response } }

    /// Starts (or, for a task made from resume data, continues) the transfer.
    public func resume() {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var request = URLRequest(url: url)
        let (offset, validator) = state.withLock { ($0.offset, $0.entityTag ?? $0.lastModified) }
        if offset > 0 {
            request.setValue(rangeHeader(from: offset), forHTTPHeaderField: "Range")
            if let validator { request.setValue(validator, forHTTPHeaderField: "If-Range") }
        }
        let task = session.makeURLSession(for: self).dataTask(with: request)
        state.withLock { $0.task = task }
        task.resume()
    }

    /// What iOS would hand back from `cancel(byProducingResumeData:)` at this moment: nil until
    /// the server has named a validator, because without one a resume could splice two versions.
    public func currentResumeData() -> Data? {
        let blob: ResumeData? = state.withLock { state in
            guard state.entityTag != nil || state.lastModified != nil else { return nil }
            return ResumeData(downloadURL: url.absoluteString, bytesReceived: state.written,
                              entityTag: state.entityTag, serverDownloadDate: state.lastModified,
                              tempFileName: tempFileName)
        }
        return try? blob?.encoded(as: .keyedArchive)
    }

    /// Stops the transfer and hands back resume data (nil when there is nothing to resume, or when
    /// the task is not transferring). The handler runs once the transfer has stopped, so the blob
    /// covers every byte that arrived; the temp file stays for the resume. No delegate method is
    /// called after this.
    public func cancel(byProducingResumeData completionHandler: @escaping @Sendable (Data?) -> Void) {
        let task = state.withLock { state in
            state.beginPausing(handOver: completionHandler) ? state.task : nil
        }
        guard let task else {
            // Never started, already paused, or already finished: nothing is under way to stop.
            let resumeData = state.withLock { $0.phase.isStopped } ? nil : currentResumeData()
            return DispatchQueue.global().async { completionHandler(resumeData) }
        }
        task.cancelAtOnce()
    }

    // MARK: - URLSession's data delegate

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                           completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard let http = response as? HTTPURLResponse else {
            return refuse(DownloadError.httpStatus(0, url: url.absoluteString), completionHandler)
        }
        let offset = state.withLock { $0.offset }
        let startAt: Int64
        switch http.statusCode {
        case 206:
            guard case .bytes(let first, _, let total?)? = http.contentRange, first == offset else {
                return refuse(DownloadError.contentRangeMismatch(
                    expectedStart: offset, header: http.value(forHTTPHeaderField: "Content-Range")), completionHandler)
            }
            // A server that ignores If-Range may answer a 206 for a new version: its bytes would
            // be spliced onto the old ones. That version is started over instead.
            let resumedValidator = state.withLock { $0.entityTag ?? $0.lastModified }
            let validator = http.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
                ?? http.value(forHTTPHeaderField: "Last-Modified")
            if offset > 0, resumedValidator == nil || validator != resumedValidator {
                return startOver(because: "the 206 is for another version of the file (validator \(validator ?? "none"); "
                                 + "the resume data's: \(resumedValidator ?? "none"))", completionHandler)
            }
            state.withLock { $0.total = total }
            startAt = offset
        case 200:
            state.withLock { $0.total = http.expectedContentLength }
            startAt = 0
        case 416 where offset > 0 && http.contentRange == .unsatisfied(total: offset):
            // The temp file already holds the whole resource: nothing is left to send.
            state.withLock { state in
                state.total = offset
                state.response = http
            }
            return completionHandler(.allow)
        default:
            return refuse(DownloadError.httpStatus(http.statusCode, url: (http.url ?? url).absoluteString), completionHandler)
        }
        do {
            let handle = try FileHandle(forWritingTo: tempFile, at: startAt)
            let etag = http.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
            let total = state.withLock { state in
                state.response = http
                state.handle = handle
                state.written = startAt
                state.entityTag = etag
                state.lastModified = http.value(forHTTPHeaderField: "Last-Modified")
                return state.total
            }
            if offset > 0 {
                delegate.downloadTask(self, didResumeAtOffset: startAt, expectedTotalBytes: total)
            }
            completionHandler(.allow)
        } catch {
            refuse(DownloadError.localIO(path: tempFile.path, reason: error.localizedDescription), completionHandler)
        }
    }

    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (handle, paused) = state.withLock { state in
            (state.failure == nil ? state.handle : nil, !state.phase.isTransferring)
        }
        guard let handle else { return }
        do {
            try handle.write(contentsOf: data)
        } catch {
            let failure = DownloadError.localIO(path: tempFile.path, reason: error.localizedDescription)
            state.withLock { $0.failure = failure }
            if !paused { dataTask.cancelAtOnce() }
            return
        }
        let (written, total) = state.withLock { state in
            state.written += Int64(data.count)
            return (state.written, state.total)
        }
        // After Pause the bytes still count for the resume data, but the delegate hears no more.
        guard !paused else { return }
        delegate.downloadTask(self, didWriteData: Int64(data.count), totalBytesWritten: written,
                              totalBytesExpectedToWrite: total)
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        CancelWhileCompleting.completionBegins(task)
        let (phase, failure) = state.withLock { state in
            try? state.handle?.close()
            state.handle = nil
            return (state.stop(), state.failure)
        }
        if case .pausing(let handOver) = phase { return handOver(currentResumeData()) }
        if let failure {
            return delegate.downloadTask(self, didCompleteWithError: failure)
        }
        if let error {
            // As on iOS: a broken transfer's error carries the data to resume from.
            var userInfo = (error as NSError).userInfo
            if let resumeData = currentResumeData() { userInfo[Self.resumeDataKey] = resumeData }
            let code = (error as? URLError)?.code ?? .unknown
            return delegate.downloadTask(self, didCompleteWithError: URLError(code, userInfo: userInfo))
        }
        delegate.downloadTask(self, didFinishDownloadingTo: tempFile)
        try? FileManager.default.removeItem(at: tempFile)
        delegate.downloadTask(self, didCompleteWithError: nil)
    }

    /// Deletes the temp file, which holds another version, and forgets it: no resume data is
    /// handed out for it, and the next task asks for the whole file.
    private func startOver(because reason: String,
                           _ completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        try? FileManager.default.removeItem(at: tempFile)
        state.withLock { state in
            (state.offset, state.written, state.entityTag, state.lastModified) = (0, 0, nil, nil)
        }
        refuse(DownloadError.partialFileReplaced(reason: reason), completionHandler)
    }

    private func refuse(_ error: any Error,
                        _ completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        state.withLock { $0.failure = error }
        completionHandler(.cancel)
    }
}

/// What a download task belongs to, as `URLSession` is on iOS: it makes the tasks, and the app
/// must invalidate it when done. Until then it keeps every task it made, and their delegates,
/// alive (each task's transfer runs in a URLSession that holds the task as its delegate).
/// Creating and invalidating are told in the run's story.
public final class ResumableDownloadSession: Sendable {
    private static let sessionsMade = Atomic<Int>(0)

    private let log: @Sendable (String) -> Void
    private let makeSession: @Sendable (any URLSessionDataDelegate, OperationQueue) -> URLSession
    private let number: Int
    private let temporaryFolder: URL
    private let delegate: any ResumableDownloadTaskDelegate
    private let urlSessions = Mutex<[URLSession]>([])

    /// Tasks keep their temporary files in `temporaryFolder`; `delegate` hears from all of them.
    /// Each transfer runs in a URLSession from `makeSession` (the lab's inspected one); creating
    /// and invalidating are told through `log`.
    public init(temporaryFolder: URL, log: @escaping @Sendable (String) -> Void,
                makeSession: @escaping @Sendable (any URLSessionDataDelegate, OperationQueue) -> URLSession,
                delegate: any ResumableDownloadTaskDelegate) {
        self.log = log
        self.makeSession = makeSession
        self.temporaryFolder = temporaryFolder
        self.delegate = delegate
        number = Self.sessionsMade.add(1, ordering: .relaxed).newValue
        log("download session \(number) created")
    }

    public func downloadTask(with url: URL) -> ResumableDownloadTask {
        ResumableDownloadTask(url: url, folder: temporaryFolder, session: self, delegate: delegate)
    }

    /// Throws `ResumeDataError` for a blob that is not resume data.
    public func downloadTask(withResumeData resumeData: Data) throws -> ResumableDownloadTask {
        try ResumableDownloadTask(resumeData: resumeData, folder: temporaryFolder, session: self, delegate: delegate)
    }

    /// Lets the running tasks finish, then lets go of everything this session holds.
    public func finishTasksAndInvalidate() {
        for session in urlSessions.withLock({ $0 }) { session.finishTasksAndInvalidate() }
        urlSessions.withLock { $0.removeAll() }
        log("download session \(number) invalidated")
    }

    func makeURLSession(for task: ResumableDownloadTask) -> URLSession {
        let session = makeSession(task, BoundedOperationQueue(capacity: 64))
        urlSessions.withLock { $0.append(session) }
        return session
    }
}

