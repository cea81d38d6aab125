import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary

/// A parsed `Content-Range` response header (RFC 9110 §14.4), for checking that a 206 or 416
/// really describes the bytes a client asked for.
public enum ContentRange: Equatable, Sendable {
    /// `bytes first-last/total`; `total` is nil when the server sent `*` for an unknown length.
    case bytes(first: Int64, last: Int64, total: Int64?)
    /// `bytes */total`, sent with 416 Range Not Satisfiable.
    case unsatisfied(total: Int64)

    /// Returns nil for anything that is not a well-formed single byte range.
    public init?(header: String) {
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst("bytes ".count)
        let parts = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let total: Int64?
        if parts[1] == "*" {
            total = nil
        } else {
            guard let value = ContentRange.number(parts[1]) else { return nil }
            total = value
        }
        if parts[0] == "*" {
            guard let total else { return nil }
            self = .unsatisfied(total: total)
            return
        }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2,
              let first = ContentRange.number(bounds[0]),
              let last = ContentRange.number(bounds[1]),
              first <= last
        else { return nil }
        if let total, last >= total { return nil }
        self = .bytes(first: first, last: last, total: total)
    }

    /// The full length of the representation, when the header states it.
    public var total: Int64? {
        switch self {
        case .bytes(_, _, let total): total
        case .unsatisfied(let total): total
        }
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber) else { return nil }
        return Int64(text)
    }
}

extension URLResponse {
    /// How many bytes the delegate will be handed: `expectedContentLength` for a body sent as it
    /// is; -1 (unknown) for a compressed one, whose announced length is the compressed size while
    /// URLSession hands over the decoded bytes, several times as many.
    public var expectedDecodedLength: Int64 {
        (self as? HTTPURLResponse)?.contentEncoding == nil ? expectedContentLength : -1
    }
}

/// The `Range` request header for "everything from `offset` on".
public func rangeHeader(from offset: Int64) -> String { "bytes=\(offset)-" }

extension HTTPURLResponse {
    /// The parsed `Content-Range` header, or nil when it is missing or malformed.
    public var contentRange: ContentRange? {
        value(forHTTPHeaderField: "Content-Range").flatMap(ContentRange.init(header:))
    }

    /// The validator to resume against: the ETag, else Last-Modified; nil when this body cannot
    /// be resumed at all. RFC 9110 §13.1.5: If-Range may carry neither a weak ETag (`W/"…"`) nor,
    /// when there is an ETag, a date. A compressed body is decoded on its way in, so the bytes
    /// on disk are no offset into what the server would send for a Range.
    public var resumeValidator: String? {
        guard contentEncoding == nil else { return nil }
        if let etag = value(forHTTPHeaderField: "ETag") { return etag.hasPrefix("W/") ? nil : etag }
        return value(forHTTPHeaderField: "Last-Modified")
    }

    /// The body's content coding (`gzip`, `br`), or nil when it is sent as it is. URLSession hands
    /// over the decoded bytes: the announced length and any byte offset count the encoded ones.
    public var contentEncoding: String? {
        guard let coding = value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces),
              !coding.isEmpty, coding.lowercased() != "identity" else { return nil }
        return coding
    }

    /// The SHA-256 from an RFC 9530 `Repr-Digest: sha-256=:<base64>:` header, as lowercase hex.
    public var reprDigestSHA256: String? {
        guard let header = value(forHTTPHeaderField: "Repr-Digest") else { return nil }
        for member in header.split(separator: ",") {
            let item = member.trimmingCharacters(in: .whitespaces)
            guard item.hasPrefix("sha-256=:"), item.hasSuffix(":"), item.count > "sha-256=::".count else { continue }
            let base64 = item.dropFirst("sha-256=:".count).dropLast()
            guard let digest = Data(base64Encoded: String(base64)), digest.count == 32 else { return nil }
            return digest.map { String(format: "%02x", $0) }.joined()
        }
        return nil
    }
}
