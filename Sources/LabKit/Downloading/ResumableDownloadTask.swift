#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import LabVocabulary
import Synchronization

// Foundation on Linux has URLSessionDownloadTask, but its cancel(byProducingResumeData:) always
// hands back nil and its downloadTask(withResumeData:) makes a task with no request. Two
// classes fill that in under Apple's names (the session is in ResumableDownloadSession.swift): a URLSession whose download tasks keep the resume
// data contract, and the task. A lesson never names them: it gets a `URLSession` from
// `run.makeSession(delegate:delegateQueue:)` and its tasks as `URLSessionDownloadTask`s, and its
// delegate is a `URLSessionDownloadDelegate`. On Apple's systems this file is empty and the same
// code runs Apple's own session (`DownloadSession` in FoundationSeam.swift).

/// A download task that keeps the resume data contract on Linux, built on a data task.
///
/// It does what Apple's does underneath:
/// - The body goes to a temporary file, `CFNetworkDownload_<id>.tmp` in the session's temporary
///   folder. Any status's body is downloaded: a 404's error page too, as on Apple's systems, so
///   the delegate checks `response` in `didFinishDownloadingTo`. A resume answered with an error
///   status fails instead (`DownloadError.httpStatus`), keeping the partial file.
/// - `cancel(byProducingResumeData:)` closes the connection at once (`cancelAtOnce()`) and writes
///   what was already on its way. Once the transfer has stopped, the delegate hears
///   `didCompleteWithError` with `URLError(.cancelled)`, and then the handler gets an Apple-format
///   blob (`ResumeData`, keyed archive): URL, bytes received, ETag or Last-Modified, temporary file
///   name. The blob is nil until the server has named a validator: without one a resume could
///   splice two versions. When the rest of the body had already arrived, the Pause came too late:
///   the task finishes (`didFinishDownloadingTo`, then `didCompleteWithError` with nil) and the
///   handler gets nil.
/// - A task made from a blob asks for the rest with `Range` and `If-Range`, and judges the answer
///   by `ResumeRules`, as `PartialFile` does. A 206 that starts at
///   the blob's offset, with the blob's validator, continues the temporary file
///   (`didResumeAtOffset`); a 200 (the file changed) starts it over from byte 0. A 206 with another
///   validator (a server that ignores `If-Range`) deletes the temporary file and fails with
///   `DownloadError.partialFileReplaced`, carrying no resume data. A 416 whose length equals the
///   blob's offset means the temporary file is already whole.
/// - A broken transfer or a failed write fails the task with a `URLError` that carries resume
///   data (`downloadTaskResumeData`) once there is a validator.
/// - `suspend()` stops the transfer and keeps the bytes; `resume()` continues with `Range`.
///   `cancel()` stops it and deletes the temporary file: no resume data can lead back to it.
/// - When the body is complete, `didFinishDownloadingTo` gets the temporary file, which is deleted
///   as soon as the call returns (Foundation's own are never deleted on Linux).
/// - Callbacks come one at a time on the session's delegate queue.
public final class ResumableDownloadTask: URLSessionDownloadTask, @unchecked Sendable {
    // @unchecked: URLSessionDownloadTask is an open Foundation class marked @unchecked Sendable;
    // the state added here is behind a Mutex.

    private let session: ResumableDownloadSession
    private let identifier: Int
    private let request: URLRequest?
    /// Why a blob made no request: the task fails with it when resumed.
    private let unusable: ResumeDataError?
    private let folder: URL
    private let tempFileName: String
    private var tempFile: URL { folder.appendingPathComponent(tempFileName) }

    /// Where the task is. Each transition checks the phase it starts from.
    private enum Phase {
        case notStarted
        case transferring(URLSessionDataTask)
        /// Asked to stop; the end of the transfer completes the stop.
        case stopping(URLSessionDataTask, Stop)
        /// Suspended after a transfer: `resume()` continues from what is on disk.
        case suspended
        case completed

        enum Stop {
            case pause(handOver: ResumeDataHandler)
            /// `resumeAfter`: `resume()` came before the transfer had stopped.
            case suspend(resumeAfter: Bool)
            case cancel
        }
    }

    private struct Shared {
        var phase = Phase.notStarted
        var offset: Int64          // where the current transfer starts in the temporary file
        var written: Int64         // bytes in the temporary file that belong to the resource
        var receivedByTransfers: Int64 = 0
        var total: Int64 = -1
        var entityTag: String?
        var lastModified: String?
        var handle: FileHandle?
        var response: HTTPURLResponse?
        var failure: (any Error)?
        var error: (any Error)?

        /// What `If-Range` names: the ETag, else the Last-Modified date.
        var validator: String? { entityTag ?? lastModified }
    }
    private let shared: Mutex<Shared>

    /// A fresh download of `request`, with a new temporary file.
    init(request: URLRequest, session: ResumableDownloadSession, identifier: Int) {
        self.session = session
        self.identifier = identifier
        self.request = request
        unusable = nil
        folder = LabFolders.temporary
        tempFileName = Self.newTempFileName()
        shared = Mutex(Shared(offset: 0, written: 0))
        super.init()
    }

    /// A download that continues from `resumeData`. The temporary file it names must be in the
    /// session's folder; bytes in it beyond the blob's count are cut off, as they are not vouched for.
    init(resumeData: Data, session: ResumableDownloadSession, identifier: Int) {
        self.session = session
        self.identifier = identifier
        folder = LabFolders.temporary
        do {
            let blob = try Self.read(resumeData)
            // The original request's own fields go again; the range is the task's to ask. A field
            // with a control character in it (a line break would start another header) is dropped.
            var request = URLRequest(url: blob.url)
            for (name, value) in blob.resumeData.originalRequestHeaders
            where !["range", "if-range"].contains(name.lowercased())
                && !(name + value).unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                request.setValue(value, forHTTPHeaderField: name)
            }
            self.request = request
            unusable = nil
            tempFileName = blob.tempFileName
            let onDisk = PartialFile.size(of: folder.appendingPathComponent(blob.tempFileName))
            let offset = min(blob.resumeData.bytesReceived, onDisk)
            shared = Mutex(Shared(offset: offset, written: offset, entityTag: blob.resumeData.entityTag,
                                  lastModified: blob.resumeData.serverDownloadDate))
        } catch {
            request = nil
            unusable = error as? ResumeDataError ?? ResumeDataError("\(error)")
            tempFileName = Self.newTempFileName()
            shared = Mutex(Shared(offset: 0, written: 0))
        }
        super.init()
    }

    /// The blob's URL and temporary file name; the name comes from a file anyone could have
    /// written, so it must be a plain file name, inside the folder.
    private static func read(_ resumeData: Data) throws -> (resumeData: ResumeData, url: URL, tempFileName: String) {
        let (blob, _) = try ResumeData.decode(resumeData)
        guard let url = URL(string: blob.downloadURL) else {
            throw ResumeDataError("NSURLSessionDownloadURL is not a URL: \(blob.downloadURL)")
        }
        let tempFileName = blob.tempFileName ?? newTempFileName()
        guard ResumeData.isPlainFileName(tempFileName) else {
            throw ResumeDataError("the temporary file name is not a plain file name (\(tempFileName.debugDescription))")
        }
        return (blob, url, tempFileName)
    }

    private static func newTempFileName() -> String { "CFNetworkDownload_\(UUID().uuidString.prefix(8)).tmp" }

    // MARK: - URLSessionTask, as Apple's

    public override var taskIdentifier: Int { identifier }
    public override var originalRequest: URLRequest? { request }
    public override var currentRequest: URLRequest? {
        shared.withLock { shared in request.map { Self.rest(of: $0, from: shared.offset, validator: shared.validator) } }
    }
    public override var response: URLResponse? { shared.withLock { $0.response } }
    public override var error: (any Error)? { shared.withLock { $0.error } }
    /// Body bytes received by this task's transfers, those after a Pause included.
    public override var countOfBytesReceived: Int64 { shared.withLock { $0.receivedByTransfers } }
    public override var countOfBytesExpectedToReceive: Int64 { shared.withLock { $0.total } }

    public override var state: URLSessionTask.State {
        switch shared.withLock({ $0.phase }) {
        case .notStarted, .suspended, .stopping(_, .suspend): .suspended
        case .transferring: .running
        case .stopping: .canceling
        case .completed: .completed
        }
    }

    /// Starts the transfer, or continues it after `suspend()`.
    public override func resume() {
        if let unusable {
            // Nothing can be asked for: the task fails at once and touches nothing.
            let firstResume: Bool = shared.withLock { shared in
                guard case .notStarted = shared.phase else { return false }
                shared.phase = .completed
                return true
            }
            guard firstResume else { return }
            session.taskStarted(self)
            return completeOutOfBand(with: URLError(.unsupportedURL, userInfo: [
                NSLocalizedDescriptionKey: "not usable resume data: \(unusable)",
            ]))
        }
        let (transfer, firstResume): (URLSessionDataTask?, Bool) = shared.withLock { shared in
            switch shared.phase {
            case .notStarted:
                return (beginTransfer(&shared), true)
            case .suspended:
                return (beginTransfer(&shared), false)
            case .stopping(let transfer, .suspend):
                shared.phase = .stopping(transfer, .suspend(resumeAfter: true))
                return (nil, false)
            case .transferring, .stopping, .completed:
                return (nil, false)
            }
        }
        if firstResume { session.taskStarted(self) }
        transfer?.resume()
    }

    public override func suspend() {
        let transfer: URLSessionDataTask? = shared.withLock { shared in
            guard case .transferring(let transfer) = shared.phase else { return nil }
            shared.phase = .stopping(transfer, .suspend(resumeAfter: false))
            return transfer
        }
        transfer?.cancelAtOnce()
    }

    public override func cancel() {
        switch stop(.cancel) {
        case .idle:
            try? FileManager.default.removeItem(at: tempFile)
            completeOutOfBand(with: URLError(.cancelled))
        case .stopping, .alreadyEnding:
            break
        }
    }

    /// Stops the transfer and hands back resume data (nil when there is nothing to resume from).
    /// The handler runs once the transfer has stopped, after `didCompleteWithError`, so the blob
    /// covers every byte that arrived; the temporary file stays for the resume.
    public override func cancel(byProducingResumeData completionHandler: @escaping (Data?) -> Void) {
        let handOver = ResumeDataHandler(completionHandler)
        switch stop(.pause(handOver: handOver)) {
        case .idle:
            let resumeData = currentResumeData()
            completeOutOfBand(with: cancelledError(resumeData: resumeData)) { handOver.call(resumeData) }
        case .stopping:
            break
        case .alreadyEnding:
            // Cancelled or finished already: nothing more to hand back.
            onDelegateQueue { handOver.call(nil) }
        }
    }

    private enum StopStep { case idle, stopping, alreadyEnding }

    /// Pause or cancel: a transfer under way (or stopping for a suspend) is stopped; an idle task
    /// is completed on the spot.
    private func stop(_ stop: Phase.Stop) -> StopStep {
        let (step, transfer): (StopStep, URLSessionDataTask?) = shared.withLock { shared in
            switch shared.phase {
            case .notStarted, .suspended:
                shared.phase = .completed
                return (.idle, nil)
            case .transferring(let transfer):
                shared.phase = .stopping(transfer, stop)
                return (.stopping, transfer)
            case .stopping(let transfer, .suspend):
                // Already being stopped: it now ends as this stop says.
                shared.phase = .stopping(transfer, stop)
                return (.stopping, nil)
            case .stopping, .completed:
                return (.alreadyEnding, nil)
            }
        }
        transfer?.cancelAtOnce()
        return step
    }

    // MARK: - The transfer

    /// `request`, asking with `Range: bytes=<offset>-` and `If-Range` once there are bytes to continue.
    private static func rest(of request: URLRequest, from offset: Int64, validator: String?) -> URLRequest {
        guard offset > 0 else { return request }
        var rest = request
        rest.setValue(rangeHeader(from: offset), forHTTPHeaderField: "Range")
        if let validator { rest.setValue(validator, forHTTPHeaderField: "If-Range") }
        return rest
    }

    /// Under the lock, so that no stop can come between: the next transfer, from what is on
    /// disk, marked as under way. The caller resumes it once the lock is let go.
    private func beginTransfer(_ shared: inout Shared) -> URLSessionDataTask? {
        guard let request else { return nil }
        try? LabFolders.make(folder)
        shared.offset = shared.written
        shared.failure = nil
        let transfer = session.makeTransferSession(for: Receiver(self))
            .dataTask(with: Self.rest(of: request, from: shared.offset, validator: shared.validator))
        shared.phase = .transferring(transfer)
        return transfer
    }

    /// The data task's delegate: it passes each call on to the task, which is not a delegate itself.
    private final class Receiver: NSObject, URLSessionDataDelegate, Sendable {
        let task: ResumableDownloadTask
        init(_ task: ResumableDownloadTask) { self.task = task }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
            completionHandler(task.received(response))
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            task.received(data, from: dataTask)
        }

        func urlSession(_ session: URLSession, task dataTask: URLSessionTask, didCompleteWithError error: (any Error)?) {
            CancelWhileCompleting.completionBegins(dataTask)
            session.finishTasksAndInvalidate()  // one transfer per session: its libcurl handle goes
            task.transferEnded(with: error)
        }
    }

    /// Where the body of `response` goes: on at the offset, from byte 0, or nowhere.
    private func received(_ response: URLResponse) -> URLSession.ResponseDisposition {
        guard let http = response as? HTTPURLResponse else {
            return refuse(DownloadError.httpStatus(0, url: request?.url?.absoluteString ?? ""))
        }
        let (offset, resumedValidator) = shared.withLock { ($0.offset, $0.validator) }
        let validator = http.resumeValidator
        let startAt: Int64
        // As Apple's task does, a 200's progress counts against the announced length.
        var total = http.expectedContentLength
        // Resume data keeps the validator, not the file's length.
        let known = resumedValidator.map { ResumeRules.Known(validator: $0, total: -1) }
        switch ResumeRules.judge(ResumeRules.Answer(http), onDisk: offset, known: known) {
        case .continueAt(let at, let whole):
            total = whole
            startAt = at
        case .alreadyComplete(let whole):
            // The temporary file already holds the whole resource, of this version.
            shared.withLock { shared in
                shared.total = whole
                shared.response = http
            }
            return .allow
        case .startFromZero:
            startAt = 0
        case .anotherVersion(let reason):
            return startOver(because: reason)
        case .wrongRange(let expectedStart):
            return refuse(DownloadError.contentRangeMismatch(expectedStart: expectedStart, header: http.value(forHTTPHeaderField: "Content-Range")))
        case .notTheFile(let status):
            // Where Apple's behaviour differs: on a fresh download any other status's body is the
            // download, an error page too. On a resume it would overwrite the bytes the resume
            // data vouches for: the task fails instead, and the partial file stays.
            guard offset == 0 else {
                return refuse(DownloadError.httpStatus(status, url: (http.url ?? request?.url)?.absoluteString ?? ""))
            }
            startAt = 0
        }
        do {
            let handle = try FileHandle(forWritingTo: tempFile, at: startAt)
            let resumed = shared.withLock { shared in
                shared.response = http
                shared.handle = handle
                shared.written = startAt
                shared.total = total
                // No validator (a weak ETag, a compressed body): no resume data, as nothing can
                // be resumed onto these bytes.
                shared.entityTag = validator == nil ? nil : http.value(forHTTPHeaderField: "ETag")
                shared.lastModified = validator == nil ? nil : http.value(forHTTPHeaderField: "Last-Modified")
                return shared.offset > 0
            }
            if resumed, let delegate = session.downloadDelegate {
                delegate.urlSession(session, downloadTask: self, didResumeAtOffset: startAt, expectedTotalBytes: total)
            }
            return .allow
        } catch {
            return refuse(writeError(error))
        }
    }

    private func received(_ data: Data, from transfer: URLSessionDataTask) {
        let (handle, stopping) = shared.withLock { shared in
            shared.receivedByTransfers += Int64(data.count)
            let stopping = if case .stopping = shared.phase { true } else { false }
            return (shared.failure == nil ? shared.handle : nil, stopping)
        }
        guard let handle else { return }
        do {
            try handle.write(contentsOf: data)
        } catch {
            let failure = writeError(error)
            shared.withLock { $0.failure = failure }
            if !stopping { transfer.cancelAtOnce() }
            return
        }
        let (written, total) = shared.withLock { shared in
            shared.written += Int64(data.count)
            return (shared.written, shared.total)
        }
        // After Pause the bytes still count for the resume data, but the delegate hears no more.
        guard !stopping, let delegate = session.downloadDelegate else { return }
        delegate.urlSession(session, downloadTask: self, didWriteData: Int64(data.count), totalBytesWritten: written,
                            totalBytesExpectedToWrite: total)
    }

    private func transferEnded(with error: (any Error)?) {
        enum Ending {
            /// The whole body is on disk, whatever stopped the transfer (but a cancel).
            case finished(handOver: ResumeDataHandler?)
            case suspended(restart: URLSessionDataTask?)
            case paused(ResumeDataHandler)
            case cancelled
            case failed(any Error)
            case broken(any Error)
        }
        let ending: Ending = shared.withLock { shared in
            try? shared.handle?.close()
            shared.handle = nil
            let whole = shared.failure == nil && shared.total >= 0 && shared.written == shared.total
            switch shared.phase {
            case .stopping(_, .cancel):
                return .cancelled
            case .stopping(_, .suspend(let resumeAfter)) where !whole:
                shared.phase = .suspended
                return .suspended(restart: resumeAfter ? beginTransfer(&shared) : nil)
            case .stopping(_, .pause(let handOver)):
                return whole ? .finished(handOver: handOver) : .paused(handOver)
            default:
                if whole { return .finished(handOver: nil) }
                if let failure = shared.failure { return .failed(failure) }
                return error.map { .broken($0) } ?? .finished(handOver: nil)
            }
        }
        switch ending {
        case .finished(let handOver):
            finish()
            // Nothing is left to resume: a Pause that came too late gets nil, as from a task that
            // has finished.
            handOver?.call(nil)
        case .suspended(let restart):
            restart?.resume()
        case .paused(let handOver):
            // A Pause ends as a Pause, whatever else went wrong meanwhile: the blob covers the
            // bytes that reached the file.
            let resumeData = resumeDataOrNoFile()
            complete(with: cancelledError(resumeData: resumeData))
            handOver.call(resumeData)
        case .cancelled:
            try? FileManager.default.removeItem(at: tempFile)
            complete(with: URLError(.cancelled))
        case .failed(let failure):
            complete(with: failure)
        case .broken(let error):
            // As on Apple's systems: a broken transfer's error carries the data to resume from.
            var userInfo = (error as NSError).userInfo
            if let resumeData = resumeDataOrNoFile() { userInfo[URLSessionDownloadTaskResumeData] = resumeData }
            complete(with: URLError((error as? URLError)?.code ?? .unknown, userInfo: userInfo))
        }
    }

    /// The resume data for the bytes on disk; nil, and the temporary file deleted, when there is
    /// none (no validator): nothing could ever lead back to the file.
    private func resumeDataOrNoFile() -> Data? {
        let resumeData = currentResumeData()
        if resumeData == nil { try? FileManager.default.removeItem(at: tempFile) }
        return resumeData
    }

    /// The body is complete: the delegate moves the temporary file away, then it is deleted.
    private func finish() {
        session.downloadDelegate?.urlSession(session, downloadTask: self, didFinishDownloadingTo: tempFile)
        try? FileManager.default.removeItem(at: tempFile)
        complete(with: nil)
    }

    /// Ends the task: `didCompleteWithError`, here on the delegate queue.
    private func complete(with error: (any Error)?) {
        shared.withLock { shared in
            shared.phase = .completed
            shared.error = error
        }
        (session.delegate as? any URLSessionTaskDelegate)?.urlSession(session, task: self, didCompleteWithError: error)
        session.taskCompleted(self)
    }

    /// Ends a task that had no transfer to wait for: its `didCompleteWithError` goes to the
    /// delegate queue, as every callback does.
    private func completeOutOfBand(with error: (any Error)?, then: @escaping @Sendable () -> Void = {}) {
        shared.withLock { $0.error = error }
        onDelegateQueue {
            self.complete(with: error)
            then()
        }
    }

    /// `work` as one more operation on the session's delegate queue. Added from another thread:
    /// a bounded queue that is full would make a caller on the queue itself wait for ever.
    private func onDelegateQueue(_ work: @escaping @Sendable () -> Void) {
        let queue = session.delegateQueue
        DispatchQueue.global().async { queue.addOperation(work) }
    }

    /// What Apple's `cancel(byProducingResumeData:)` would hand back now.
    private func currentResumeData() -> Data? {
        let blob: ResumeData? = shared.withLock { shared in
            guard let url = request?.url, shared.entityTag != nil || shared.lastModified != nil else { return nil }
            var blob = ResumeData(downloadURL: url.absoluteString, bytesReceived: shared.written,
                                  entityTag: shared.entityTag, serverDownloadDate: shared.lastModified,
                                  tempFileName: tempFileName)
            blob.originalRequestHeaders = request?.allHTTPHeaderFields ?? [:]
            return blob
        }
        return try? blob?.encoded(as: .keyedArchive)
    }

    private func cancelledError(resumeData: Data?) -> URLError {
        URLError(.cancelled, userInfo: resumeData.map { [URLSessionDownloadTaskResumeData: $0] } ?? [:])
    }

    /// A local write that failed: `URLError(.cannotWriteToFile)`, with resume data for the bytes
    /// that did reach the file.
    private func writeError(_ error: any Error) -> URLError {
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: "cannot write \(tempFile.path): \(error.localizedDescription)",
            NSUnderlyingErrorKey: error as NSError,
        ]
        if let resumeData = currentResumeData() { userInfo[URLSessionDownloadTaskResumeData] = resumeData }
        return URLError(.cannotWriteToFile, userInfo: userInfo)
    }

    /// Deletes the temporary file, which holds another version, and forgets it: no resume data is
    /// handed out for it, and the next task asks for the whole file.
    private func startOver(because reason: String) -> URLSession.ResponseDisposition {
        try? FileManager.default.removeItem(at: tempFile)
        shared.withLock { shared in
            (shared.offset, shared.written, shared.entityTag, shared.lastModified) = (0, 0, nil, nil)
        }
        return refuse(DownloadError.partialFileReplaced(reason: reason))
    }

    private func refuse(_ error: any Error) -> URLSession.ResponseDisposition {
        shared.withLock { $0.failure = error }
        return .cancel
    }
}

extension URLError {
    /// The resume data a failed or paused download task's error carries, as on Apple's systems,
    /// where swift-corelibs-foundation's `URLError` lacks it.
    public var downloadTaskResumeData: Data? { userInfo[URLSessionDownloadTaskResumeData] as? Data }
}
#endif
