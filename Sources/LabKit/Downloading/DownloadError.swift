import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary

/// Failures that a lesson's own checks detect (the corrected variants make these checks).
public enum DownloadError: Error, CustomStringConvertible, Sendable {
    /// The server answered with a status that carries no file, such as 404 or 500.
    case httpStatus(Int, url: String)
    /// A 206 whose Content-Range does not start where the partial file ends.
    case contentRangeMismatch(expectedStart: Int64, header: String?)
    /// Writing to, or opening, the local file failed.
    case localIO(path: String, reason: String)
    /// Reading a local file (one to upload) failed.
    case cannotRead(path: String, reason: String)
    /// A body that would have to sit in memory whole is larger than the lesson allows.
    case tooLargeForMemory(bytes: Int64, limit: Int64)
    /// A body that would have to sit in memory whole, and whose size the server does not tell.
    case unknownLengthForMemory(limit: Int64)
    /// The body ended at a different length than the response announced.
    case lengthMismatch(expected: Int64, received: Int64)
    /// A resume data file that is not resume data, or that names a temporary file outside the
    /// temporary folder. It is left where it is.
    case unusableResumeData(path: String, reason: String)
    /// Work sent to GCD's global queue waited longer than an app may: its threads were all taken.
    case unresponsive(waited: Double, patience: Double)
    /// Transfers whose callbacks ran in the run loop of a worker of GCD's global queue: each
    /// keeps that worker from the app's jobs while it lasts, whether or not a job waited this time.
    case parkedGlobalWorkers(parked: Int, transfers: Int, queue: String)
    /// Transfers whose callbacks ran on the main thread: the app's UI waits for each of them.
    case callbacksOnTheMainThread(count: Int, transfers: Int)
    /// The server answered a resume for another version of the file: the partial file was
    /// deleted, and the next attempt starts from byte 0.
    case partialFileReplaced(reason: String)
    /// The answer to an upload went on past what any answer needs (an upload lesson bounds it).
    case answerTooLong(bytes: Int64, limit: Int64, seconds: Double)
    /// The run took longer than `--max-time` (`TransferLimits`): it ends here.
    case tookTooLong(maxSeconds: Double)
    /// A response announced or brought more than `--max-filesize` (`TransferLimits`): the run ends here.
    case responseTooLarge(String)
    /// The app broke a rule of the API, where Apple's raises an exception (lesson 09).
    case misuse(String)
    /// Lesson 09: the app's life ended without the file, and the user may try again.
    case appGaveNoFile(String)
    /// Lesson 09: the transfer service died again and again; the system stopped starting it.
    case serviceKeepsDying(restarts: Int)

    public var description: String {
        switch self {
        case .httpStatus(let status, let url):
            "HTTP \(status)\(HTTPStatus.reason(status).map { " " + $0 } ?? "") from \(ShownURL.brief(url))"
        case .contentRangeMismatch(let expectedStart, let header):
            "206 response starts at the wrong offset: expected bytes \(expectedStart)-…, got Content-Range: \(header ?? "(none)")"
        case .localIO(let path, let reason):
            "cannot write \(path): \(reason)"
        case .cannotRead(let path, let reason):
            "cannot read \(path): \(reason)"
        case .tooLargeForMemory(let bytes, let limit):
            "refusing to hold \(ByteFormat.grouped(bytes)) bytes in memory (limit \(ByteFormat.grouped(limit)), "
                + "\(ByteFormat.iec(limit))): "
                + "a file this size needs a streaming lesson, such as lesson-03-outputstream"
        case .unknownLengthForMemory(let limit):
            "refusing to hold a body of unknown size in memory (no Content-Length; limit \(ByteFormat.iec(limit))): "
                + "a file whose size is not known needs a streaming lesson, such as lesson-03-outputstream"
        case .lengthMismatch(let expected, let received):
            "the body has \(received) bytes but the response announced \(expected)"
        case .unusableResumeData(let path, let reason):
            "\(path) is not usable resume data (\(reason)); nothing was touched: remove it to start over"
        case .unresponsive(let waited, let patience):
            String(format: "the app froze: a job sent to GCD's global queue waited %.2f s (patience %.2f s)", waited, patience)
        case .parkedGlobalWorkers(let parked, let transfers, let queue):
            "\(parked) of the \(transfers) transfers ran their callbacks in the run loop of a GCD worker "
                + "(\(queue)): while each lasts, that worker is lost to the app's jobs, and one more than the cores freezes the app"
        case .callbacksOnTheMainThread(let count, let transfers):
            "\(count) of the \(transfers) transfers ran their callbacks on the main thread: the app's screen waits while each runs"
        case .partialFileReplaced(let reason):
            "\(reason); the partial file was deleted, to be downloaded again from byte 0"
        case .answerTooLong(let bytes, let limit, let seconds):
            "the server's answer did not end within \(ByteFormat.iec(limit)) or \(Int(seconds)) s "
                + "(\(ByteFormat.grouped(bytes)) bytes so far): given up"
        case .tookTooLong(let maxSeconds):
            "gave up: the run took longer than --max-time \(String(format: "%g", maxSeconds)) s"
        case .responseTooLarge(let reason):
            "gave up: \(reason)"
        case .misuse(let rule):
            rule
        case .appGaveNoFile(let reason):
            reason
        case .serviceKeepsDying(let restarts):
            "the transfer service died \(restarts) times in this run: the system stops starting it"
        }
    }

    package var exitStatus: ExitStatus {
        switch self {
        case .localIO, .cannotRead: .localIOFailed
        case .unusableResumeData: .verificationFailed
        case .unresponsive, .parkedGlobalWorkers, .callbacksOnTheMainThread: .unresponsive
        case .misuse: .misuse
        default: .transferFailed
        }
    }
}

/// Its sentence wherever an error is shown by `localizedDescription`, as a lesson's code wraps it
/// in another (rather than "The operation could not be completed").
extension DownloadError: LocalizedError {
    public var errorDescription: String? { description }
}

/// The exit status a run that failed with `error` ends with. A local file that cannot be made,
/// opened, written or moved is an I/O failure, whether the lesson's own check or Foundation's
/// download task says so (`URLError(.cannotWriteToFile)` and its neighbours).
package func exitStatus(for error: any Error) -> ExitStatus {
    if let error = error as? DownloadError { return error.exitStatus }
    if let error = error as? any RelayedError { return error.exitStatus }
    let localFileCodes: Set<URLError.Code> = [.cannotCreateFile, .cannotOpenFile, .cannotCloseFile, .cannotWriteToFile,
                                              .cannotRemoveFile, .cannotMoveFile]
    if let error = underlyingURLError(of: error), localFileCodes.contains(error.code) { return .localIOFailed }
    return .transferFailed
}

/// A failure another process of the run had and told this one (lesson 10's later launch): its
/// exit status and whether Resume could go on are its own, not guessed from its type.
package protocol RelayedError: Error {
    var exitStatus: ExitStatus { get }
    var isResumable: Bool { get }
}
