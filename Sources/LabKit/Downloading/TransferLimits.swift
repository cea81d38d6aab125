import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// How long a run may take, and how much one response may bring: the lab's `--max-time` and
/// `--max-filesize` (curl's names and meanings), and `--idle-timeout`. A server whose body never
/// ends, or that stops sending, cannot hold a lesson for ever.
///
/// The contract:
/// - `idleSeconds` is every lab-made session's `timeoutIntervalForRequest`: an attempt that
///   receives nothing for that long fails with a time-out, and the next attempt resumes.
/// - `passed(by:)` is asked about each response and each chunk the inspector sees: a response
///   that announces more than `maxFileSize` (its Content-Length, or the total of its
///   Content-Range), or brings more than that, ends the run.
/// - The run's clock passing `maxSeconds` ends the run.
/// - Ending the run early (`LessonProcess`) writes the record, prints one line, keeps the partial
///   file, and exits 69, whatever the lesson's code is doing.
public struct TransferLimits: Sendable {
    public var maxSeconds: Double?
    public var maxFileSize: Int64?
    public var idleSeconds: Double

    /// Foundation's own default idle time-out.
    public static let defaultIdleSeconds = 60.0

    package init(maxSeconds: Double?, maxFileSize: Int64?, idleSeconds: Double) {
        self.maxSeconds = maxSeconds
        self.maxFileSize = maxFileSize
        self.idleSeconds = idleSeconds
    }

    private static let current = Mutex(TransferLimits(maxSeconds: nil, maxFileSize: nil, idleSeconds: defaultIdleSeconds))
    /// The limits of this process's run, set once by `LessonProcess` before the first request.
    package static var active: TransferLimits {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// The error that ends the run, when `exchange` has passed `maxFileSize`.
    package func passed(by exchange: HTTPExchange) -> DownloadError? {
        guard let maxFileSize else { return nil }
        let range = exchange.contentRange.flatMap(ContentRange.init(header:))
        let announced: Int64? = switch exchange.status {
        case 206?: range?.total
        case 200?: exchange.contentLength
        default: nil
        }
        if let announced, announced > maxFileSize {
            return .responseTooLarge("the server announces \(ByteFormat.grouped(announced)) bytes, more than --max-filesize "
                                + ByteFormat.grouped(maxFileSize))
        }
        let start: Int64 = if case .bytes(let first, _, _)? = range { first } else { 0 }
        guard exchange.bodyBytes > maxFileSize - start else { return nil }
        return .responseTooLarge("the server sent more than --max-filesize \(ByteFormat.grouped(maxFileSize)) bytes in one response")
    }
}

extension TransferLimits {
    /// How many attempts a lesson makes by default (`--max-attempts`).
    public static let defaultAttempts = 5

    /// The options `lab compare` and `lab exercise` give every lesson they run for a file of
    /// `size`: the run ends itself before the lab would kill it (a tenth and a second early, for
    /// the process to start and to write its record), and no response may bring more than twice
    /// the file and a MiB, whatever the server does.
    public static func arguments(forFileOf size: Int64, within timeout: Duration) -> [String] {
        let seconds = min(86_400, max(1, Double(timeout.components.seconds) * 0.9 - 1))
        return ["--max-time", String(format: "%g", seconds), "--max-filesize", String(2 * size + (1 << 20))]
    }
}

extension URLSessionConfiguration {
    /// `.ephemeral`, with the run's idle time-out: the configuration of every session the lab makes.
    static var lab: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = TransferLimits.active.idleSeconds
        return configuration
    }
}
