import Foundation
import LabVocabulary
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The record a lesson prints with `--json`: one object, the contract with `lab compare`.
/// Every field is described in Lessons/README.md.
public struct LessonResult: Codable, Sendable {
    public static let currentSchema = "download-lab.lesson-result/1"

    /// How the run ended, as Lessons/README.md describes each value.
    public enum Outcome: String, Codable, Sendable {
        case verified
        /// There was no digest to compare the file with.
        case unverified
        /// The lesson said it was done, and the file is wrong.
        case verificationFailed = "verification-failed"
        case transferFailed = "transfer-failed"
        case ioFailed = "io-failed"
        /// A file the lesson reads (lesson 05's resume data) is unusable; nothing was touched.
        case badInput = "bad-input"
        /// The app froze (lesson 06's `--way crowd`).
        case unresponsive
        /// The run took longer than `--max-time` and ended itself there (exit 69).
        case timedOut = "timed-out"
    }

    public struct ErrorRecord: Codable, Sendable, Equatable {
        public var domain: String
        public var code: Int
        public var message: String
    }

    public var schema = LessonResult.currentSchema
    public var lesson: String
    public var variant: Variant
    /// The way that ran, for a lesson that shows several (lessons 00, 06 and 08); nil otherwise.
    public var way: String?
    public var url: String
    public var output: String
    public var outcome: Outcome
    public var exitCode: Int32
    public var verified: Bool
    public var expectedSHA256: String?
    public var actualSHA256: String?
    public var resourceBytes: Int64?
    public var fileBytes: Int64
    public var bytesReceived: Int64
    public var bytesWritten: Int64
    public var bytesDownloadedAgain: Int64
    public var attempts: Int
    public var resumedFrom: [Int64]
    public var wallSeconds: Double
    /// Reading the file back and hashing it, after the last attempt (0 when nothing was read back:
    /// an upload, which the server's answer verifies, or a failed download).
    public var verificationSeconds: Double
    public var cpuSeconds: Double
    public var peakRSSBytes: Int64
    public var throughputBytesPerSecond: Double
    public var writeDelayMicroseconds: Int
    public var requests: [HTTPExchange]
    public var error: ErrorRecord?
}

extension LessonResult.ErrorRecord {
    init(_ error: any Error) {
        if let error = error as? URLError {
            self.init(domain: NSURLErrorDomain, code: error.errorCode, message: describe(error))
        } else if let error = error as? DownloadError {
            self.init(domain: "DownloadLab", code: Int(error.exitStatus.rawValue), message: error.description)
        } else {
            let nsError = error as NSError
            self.init(domain: nsError.domain, code: nsError.code, message: describe(error))
        }
    }
}
