import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a lesson process ends. The codes follow sysexits(3), so scripts can tell the cases apart.
public enum ExitStatus: Int32, Codable, Sendable {
    /// Downloaded, and the SHA-256 matched (or there was nothing to check against).
    case success = 0
    /// Bad command-line input.
    case usage = 64
    /// Data error (EX_DATAERR): the file is complete but its SHA-256 is wrong, or a file the
    /// lesson reads (lesson 05's resume data) is not one it will trust.
    case verificationFailed = 65
    /// The transfer did not complete: HTTP error, connection failure, too many attempts.
    case transferFailed = 69
    /// A local file could not be opened, written or read.
    case localIOFailed = 74
    /// The app froze (EX_TEMPFAIL): a job on GCD's global queue waited past its patience.
    case unresponsive = 75
}

/// Failures that a lesson's own checks detect (the corrected variants make these checks).
public enum DownloadError: Error, CustomStringConvertible, Sendable {
    /// The server answered with a status that carries no file, such as 404 or 500.
    case httpStatus(Int, url: String)
    /// A 206 whose Content-Range does not start where the partial file ends.
    case contentRangeMismatch(expectedStart: Int64, header: String?)
    /// Writing to, or opening, the local file failed.
    case localIO(path: String, reason: String)
    /// A body that would have to sit in memory whole is larger than the lesson allows.
    case tooLargeForMemory(bytes: Int64, limit: Int64)
    /// The body ended at a different length than the response announced.
    case lengthMismatch(expected: Int64, received: Int64)
    /// A resume data file that is not resume data, or that names a temporary file outside the
    /// temporary folder. It is left where it is.
    case unusableResumeData(path: String, reason: String)
    /// Work sent to GCD's global queue waited longer than an app may: its threads were all taken.
    case unresponsive(waited: Double, patience: Double)

    public var description: String {
        switch self {
        case .httpStatus(let status, let url):
            "HTTP \(status)\(HTTPStatus.reason(status).map { " " + $0 } ?? "") from \(ShownURL.brief(url))"
        case .contentRangeMismatch(let expectedStart, let header):
            "206 response starts at the wrong offset: expected bytes \(expectedStart)-…, got Content-Range: \(header ?? "(none)")"
        case .localIO(let path, let reason):
            "cannot write \(path): \(reason)"
        case .tooLargeForMemory(let bytes, let limit):
            "refusing to hold \(ByteFormat.grouped(bytes)) bytes in memory (limit \(ByteFormat.grouped(limit)), "
                + "\(ByteFormat.iec(limit))): "
                + "a file this size needs a streaming lesson, such as lesson-03-outputstream"
        case .lengthMismatch(let expected, let received):
            "the body has \(received) bytes but the response announced \(expected)"
        case .unusableResumeData(let path, let reason):
            "\(path) is not usable resume data (\(reason)); nothing was touched: remove it to start over"
        case .unresponsive(let waited, let patience):
            String(format: "the app froze: a job sent to GCD's global queue waited %.2f s (patience %.2f s)", waited, patience)
        }
    }

    var exitStatus: ExitStatus {
        switch self {
        case .localIO: .localIOFailed
        case .unusableResumeData: .verificationFailed
        case .unresponsive: .unresponsive
        default: .transferFailed
        }
    }
}

/// What one press of "Start" or "Resume" came to.
public enum AttemptResult: Sendable {
    case finished
    case failed(any Error)
}

extension AttemptResult {
    /// A connection that broke midway can be resumed by pressing Resume again; an answer such as
    /// 404, or a local write error, cannot.
    var isResumable: Bool {
        guard case .failed(let error) = self else { return false }
        if let error = underlyingURLError(of: error) {
            // Linux reports a body cut short as -1 ("transfer closed with N bytes remaining");
            // Darwin says -1005.
            return [.unknown, .networkConnectionLost, .timedOut].contains(error.code)
        }
        return false
    }
}

enum HTTPStatus {
    /// The reason phrase, or nil for a status without a well-known one.
    static func reason(_ status: Int) -> String? {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 416: "Range Not Satisfiable"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: nil
        }
    }
}
