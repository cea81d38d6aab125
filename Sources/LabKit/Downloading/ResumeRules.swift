import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The resume rules of lessons 02 to 05 as one pure decision: what an answer to a request for
/// the rest of a partial file means for the bytes already on disk. No I/O, no logging:
/// `PartialFile` (lessons 02, 03, 04, 08) and `ResumableDownloadTask` (lesson 05 on Linux) act
/// on the verdict, each in its own way.
public enum ResumeRules {
    /// The version the bytes on disk belong to: the validator they were fetched under, and the
    /// whole file's length when it was known (-1 when not).
    public struct Known: Equatable, Sendable {
        public let validator: String
        public let total: Int64

        public init(validator: String, total: Int64) {
            self.validator = validator
            self.total = total
        }
    }

    /// What the rules read of an answer.
    public struct Answer: Equatable, Sendable {
        public let status: Int
        public let contentRange: ContentRange?
        /// The strong validator to resume against; nil for a weak ETag, none, or a compressed body.
        public let validator: String?
        public let compressed: Bool

        public init(status: Int, contentRange: ContentRange?, validator: String?, compressed: Bool) {
            self.status = status
            self.contentRange = contentRange
            self.validator = validator
            self.compressed = compressed
        }

        public init(_ response: HTTPURLResponse) {
            self.init(status: response.statusCode, contentRange: response.contentRange, validator: response.resumeValidator,
                      compressed: response.contentEncoding != nil)
        }
    }

    public enum Verdict: Equatable, Sendable {
        /// A 206 that starts where the file ends, for the version on disk: its body goes there.
        case continueAt(offset: Int64, total: Int64)
        /// A 200: the whole file follows, from byte 0. It can be resumed later only with a
        /// validator, and never when compressed (decoded bytes are no offset into what is sent).
        case startFromZero(resumable: Bool)
        /// A 416 for a file already whole, of this version: nothing is left to write.
        case alreadyComplete(total: Int64)
        /// A 206 or 416 for another version of the file, or bytes that are no offset into it: the
        /// partial file must go, and the next attempt asks for all of it.
        case anotherVersion(because: String)
        /// A 206 for another range than the one asked for: refused, the partial file kept.
        case wrongRange(expectedStart: Int64)
        /// Any other status: this is not the file.
        case notTheFile(status: Int)
    }

    /// The request for what is missing of the resource at `url`, with `onDisk` bytes of the
    /// `known` version on disk: `Range` from the end of the file and `If-Range` with the
    /// validator, so a server whose file has changed answers 200 with all of it instead of a 206
    /// to splice; with nothing known, the whole file. Every request asks for the file as it is
    /// (`Accept-Encoding: identity`, as curl and aria2 do): URLSession asks for gzip by itself,
    /// hands over the body decoded, and a server that compresses ignores `Range` (nginx does).
    public static func request(for url: URL, onDisk: Int64, known: Known?) -> URLRequest {
        var request = URLRequest(url: url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if let known, onDisk > 0 {
            request.setValue(rangeHeader(from: onDisk), forHTTPHeaderField: "Range")
            request.setValue(known.validator, forHTTPHeaderField: "If-Range")
        }
        return request
    }

    /// The verdict on `answer` for a partial file of `onDisk` bytes of the `known` version (nil
    /// when nothing vouches for them; the request then asked for the whole file).
    public static func judge(_ answer: Answer, onDisk: Int64, known: Known?) -> Verdict {
        switch answer.status {
        case 206: partialContent(answer, onDisk: onDisk, known: known)
        case 200: .startFromZero(resumable: answer.validator != nil && !answer.compressed)
        case 416 where onDisk > 0: unsatisfiable(answer, onDisk: onDisk, known: known)
        default: .notTheFile(status: answer.status)
        }
    }

    private static func partialContent(_ answer: Answer, onDisk: Int64, known: Known?) -> Verdict {
        if answer.compressed {
            return .anotherVersion(because: "the 206 is compressed: its bytes are no offset into the file")
        }
        guard case .bytes(let first, _, let total?)? = answer.contentRange, first == onDisk else {
            return .wrongRange(expectedStart: onDisk)
        }
        // A server that ignores If-Range may answer a 206 for a new version: its bytes would be
        // spliced onto the old ones.
        if onDisk > 0, !isSameVersion(answer.validator, total: total, as: known) {
            return .anotherVersion(because: "the 206 is for another version of the file (validator \(answer.validator ?? "none"), "
                                   + "\(total) bytes; the partial file's: \(describe(known)))")
        }
        return .continueAt(offset: onDisk, total: total)
    }

    /// The request carried `If-Range` with the validator: a server answers 416 only when that
    /// still matched (RFC 9110 §13.1.5), so a 416 without a validator of its own is that version.
    /// It says the file is whole when its length is the bytes on disk.
    private static func unsatisfiable(_ answer: Answer, onDisk: Int64, known: Known?) -> Verdict {
        if case .unsatisfied(let total)? = answer.contentRange, total == onDisk,
           isSameVersion(answer.validator ?? known?.validator, total: total, as: known) {
            return .alreadyComplete(total: total)
        }
        return .anotherVersion(because: "the partial file does not match the server's file (416 for \(describe(known)), "
                               + "\(onDisk) bytes on disk)")
    }

    private static func isSameVersion(_ validator: String?, total: Int64, as known: Known?) -> Bool {
        guard let known, validator == known.validator else { return false }
        return known.total < 0 || total == known.total
    }

    private static func describe(_ known: Known?) -> String {
        known.map { "\($0.validator), \($0.total < 0 ? "length unknown" : "\($0.total) bytes")" } ?? "nothing vouches for it"
    }
}
