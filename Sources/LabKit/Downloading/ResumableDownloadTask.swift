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

    let session: ResumableDownloadSession
    private let identifier: Int
    let request: URLRequest?
    /// Why a blob made no request: the task fails with it when resumed.
    private let unusable: ResumeDataError?
    let folder: URL
    let tempFileName: String
    var tempFile: URL { folder.appendingPathComponent(tempFileName) }

    /// Where the task is. Each transition checks the phase it starts from.
    enum Phase {
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

    struct Shared {
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
    let shared: Mutex<Shared>

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

    enum StopStep { case idle, stopping, alreadyEnding }

    /// Pause or cancel: a transfer under way (or stopping for a suspend) is stopped; an idle task
    /// is completed on the spot.
    func stop(_ stop: Phase.Stop) -> StopStep {
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
}

extension URLError {
    /// The resume data a failed or paused download task's error carries, as on Apple's systems,
    /// where swift-corelibs-foundation's `URLError` lacks it.
    public var downloadTaskResumeData: Data? { userInfo[URLSessionDownloadTaskResumeData] as? Data }
}
#endif
