import LabFixtures
import LabVocabulary
import NIOHTTP1

/// `POST /upload`: what the request head must say, and the JSON answer.
enum UploadEndpoint {
    static let path = "/upload"

    /// True for `/upload` with or without a query.
    static func matches(_ target: String) -> Bool {
        target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first == Substring(path)
    }

    /// The boundary from `Content-Type: multipart/form-data; boundary=…`, or the status
    /// and one-line reason to refuse the request with.
    static func boundary(of head: HTTPRequestHead, limits: MultipartLimits)
        -> Result<String, RefusedUpload> {
        if let length = head.headers.first(name: "Content-Length").flatMap({ Int64($0) }), length > limits.maxBodyBytes {
            return .failure(RefusedUpload(.payloadTooLarge,
                "the body is over \(ByteSize.format(limits.maxBodyBytes)), the most this endpoint accepts"))
        }
        guard let contentType = head.headers.first(name: "Content-Type") else {
            return .failure(RefusedUpload(.unsupportedMediaType, "expected Content-Type: multipart/form-data; boundary=..."))
        }
        let parsed: HeaderValue
        do {
            parsed = try HeaderValue(parsing: contentType)
        } catch {
            return .failure(RefusedUpload(.badRequest, "bad Content-Type: \(error.reason)"))
        }
        guard parsed.value.lowercased() == "multipart/form-data" else {
            return .failure(RefusedUpload(.unsupportedMediaType,
                "Content-Type is \(parsed.value); expected multipart/form-data; boundary=..."))
        }
        guard let boundary = parsed.parameter("boundary") else {
            return .failure(RefusedUpload(.badRequest, "Content-Type multipart/form-data has no boundary parameter"))
        }
        guard isValidBoundary(boundary) else {
            return .failure(RefusedUpload(.badRequest,
                "bad boundary: RFC 2046 allows 1 to 70 letters, digits and '()+_,-./:=? or inner spaces"))
        }
        return .success(boundary)
    }

    /// RFC 2046 section 5.1.1: 1 to 70 bchars, not ending in a space.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ".utf8)
        let bytes = Array(boundary.utf8)
        return (1...70).contains(bytes.count) && bytes.allSatisfy(allowed.contains) && bytes.last != 32
    }

    /// `{"fields":{…},"files":[…],"bodyBytes":N}` on one line. Fields keep the order they
    /// were sent in; a name sent twice appears twice.
    static func json(parts: [UploadedPart], bodyBytes: Int64) -> String {
        let fields = parts.compactMap { part in part.text.map { "\(quoted(part.name)):\(quoted($0))" } }
        let files = parts.compactMap { part -> String? in
            guard let filename = part.filename else { return nil }
            return "{\"name\":\(quoted(part.name)),\"filename\":\(quoted(filename)),"
                + "\"contentType\":\(part.contentType.map(quoted) ?? "null"),\"bytes\":\(part.bytes),"
                + "\"sha256\":\"\(DigestText.hex(part.sha256))\"}"
        }
        return "{\"fields\":{\(fields.joined(separator: ","))},\"files\":[\(files.joined(separator: ","))],"
            + "\"bodyBytes\":\(bodyBytes)}\n"
    }

    /// A JSON string literal; control characters, quotes and backslashes are escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

struct RefusedUpload: Error {
    let status: HTTPResponseStatus
    let reason: String

    init(_ status: HTTPResponseStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    init(_ error: MultipartError) {
        self.init(error.kind == .tooLarge ? .payloadTooLarge : .badRequest, error.reason)
    }
}
