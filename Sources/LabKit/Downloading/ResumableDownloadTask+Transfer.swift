#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import LabVocabulary
import Synchronization

// The transfer behind a ResumableDownloadTask (ResumableDownloadTask.swift): the data task that
// fetches the rest, what its answer means, and how the task ends.
extension ResumableDownloadTask {
    /// `request`, asking with `Range: bytes=<offset>-` and `If-Range` once there are bytes to continue.
    static func rest(of request: URLRequest, from offset: Int64, validator: String?) -> URLRequest {
        guard offset > 0 else { return request }
        var rest = request
        rest.setValue(rangeHeader(from: offset), forHTTPHeaderField: "Range")
        if let validator { rest.setValue(validator, forHTTPHeaderField: "If-Range") }
        return rest
    }

    /// Under the lock, so that no stop can come between: the next transfer, from what is on
    /// disk, marked as under way. The caller resumes it once the lock is let go.
    func beginTransfer(_ shared: inout Shared) -> URLSessionDataTask? {
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
    func received(_ response: URLResponse) -> URLSession.ResponseDisposition {
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

    func received(_ data: Data, from transfer: URLSessionDataTask) {
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
    func complete(with error: (any Error)?) {
        shared.withLock { shared in
            shared.phase = .completed
            shared.error = error
        }
        (session.delegate as? any URLSessionTaskDelegate)?.urlSession(session, task: self, didCompleteWithError: error)
        session.taskCompleted(self)
    }

    /// Ends a task that had no transfer to wait for: its `didCompleteWithError` goes to the
    /// delegate queue, as every callback does.
    func completeOutOfBand(with error: (any Error)?, then: @escaping @Sendable () -> Void = {}) {
        shared.withLock { $0.error = error }
        onDelegateQueue {
            self.complete(with: error)
            then()
        }
    }

    /// `work` as one more operation on the session's delegate queue. Added from another thread:
    /// a bounded queue that is full would make a caller on the queue itself wait for ever.
    func onDelegateQueue(_ work: @escaping @Sendable () -> Void) {
        let queue = session.delegateQueue
        DispatchQueue.global().async { queue.addOperation(work) }
    }

    /// What Apple's `cancel(byProducingResumeData:)` would hand back now.
    func currentResumeData() -> Data? {
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

    func cancelledError(resumeData: Data?) -> URLError {
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
#endif
