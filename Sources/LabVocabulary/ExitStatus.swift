/// How a lesson process ends. The codes follow sysexits(3), so scripts can tell the cases apart.
public enum ExitStatus: Int32, Codable, Sendable {
    /// Downloaded, and the SHA-256 matched; or downloaded with no SHA-256 to check against, which
    /// the record's outcome (`unverified`) and a warning on stderr say.
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
    /// The code broke a rule of the API (EX_SOFTWARE), where Apple's raises an exception: a
    /// completion handler given to a background session, a background session with no identifier.
    case misuse = 70
    /// The app froze (EX_TEMPFAIL): a job on GCD's global queue waited past its patience.
    case unresponsive = 75
}

extension ExitStatus {
    /// The outcome a lesson's JSON record gives a run that ends with this status; nil for bad
    /// command-line input, which has no record.
    public var outcome: Outcome? {
        switch self {
        case .success: .verified
        case .usage: nil
        case .verificationFailed: .verificationFailed
        case .transferFailed: .transferFailed
        case .localIOFailed: .ioFailed
        case .unresponsive: .unresponsive
        case .misuse: .misuse
        }
    }

    /// "exit 74 (io-failed)".
    public var described: String { "exit \(rawValue)" + (outcome.map { " (\($0.rawValue))" } ?? "") }
}
