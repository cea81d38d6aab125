import Crypto
import Foundation  // memchr and memcmp, from the C library Foundation brings on every system
import LabVocabulary
import NIOCore

/// What `POST /upload` accepts. Going past a bound is answered with 413.
struct MultipartLimits: Sendable {
    /// The header block of one part, up to and including its blank line.
    var maxHeaderBytes = 16 * 1024
    var maxParts = 100
    /// A plain form field (a part without `filename`) is kept as text for the answer.
    var maxFieldBytes = 64 * 1024
    /// The whole request body, preamble and epilogue included.
    var maxBodyBytes: Int64 = 8 << 30
}

/// Why an upload was refused: `tooLarge` is answered with 413, `malformed` with 400.
struct MultipartError: Error, Equatable, CustomStringConvertible {
    enum Kind: Equatable { case malformed, tooLarge }
    let kind: Kind
    let reason: String

    static func malformed(_ reason: String) -> MultipartError { MultipartError(kind: .malformed, reason: reason) }
    static func tooLarge(_ reason: String) -> MultipartError { MultipartError(kind: .tooLarge, reason: reason) }

    var description: String { reason }
}

/// One part as the parser saw it: never its bytes, only their count and digest (and the
/// text of a plain form field).
struct UploadedPart: Equatable, Sendable {
    var name: String
    /// nil for a plain form field.
    var filename: String?
    /// The part's own Content-Type header, nil when it had none.
    var contentType: String?
    var bytes: Int64
    var sha256: [UInt8]
    /// The value of a plain form field (decoded as UTF-8); nil for files.
    var text: String?
}

/// A streaming `multipart/form-data` parser (RFC 7578 on RFC 2046 syntax): feed it the
/// request body in whatever chunks the network delivers, then call `finish()`.
///
/// It never holds a part's body. Body bytes go straight into a SHA-256 hasher and a byte
/// count; only a tail shorter than the delimiter (`CRLF--boundary`) is carried over from
/// one chunk to the next, in case the delimiter straddles the border. Header blocks are
/// buffered up to `MultipartLimits.maxHeaderBytes`, form fields up to `maxFieldBytes`.
///
/// Why not vapor/multipart-kit (4.7.1 is in the package mirror and its `MultipartParser`
/// does stream `ByteBuffer`s through callbacks): it grows a header name or value without
/// any bound, so a part header of a gigabyte is held in memory; it has no end-of-input
/// call, and its state is private, so a body that stops before the closing delimiter
/// cannot be told from a complete one; and it cannot reject what follows a delimiter
/// precisely (`--x-` is taken as a close). Bounds and "malformed → 400 with a reason"
/// are this endpoint's point, so the parser is written here, in about 300 lines, and
/// its exact behaviour is covered by the upload tests.
struct MultipartParser {
    private enum State {
        /// Before the first delimiter; these bytes are ignored (RFC 2046's preamble).
        case preamble
        /// Just after a delimiter: `--` closes, otherwise optional spaces then CRLF.
        case afterDelimiter
        case headers
        case body
        /// After the close delimiter; ignored.
        case epilogue
    }

    private struct PartInProgress {
        var name: String
        var filename: String?
        var contentType: String?
        var hasher = SHA256()
        var bytes: Int64 = 0
        var text: [UInt8] = []
    }

    let boundary: String
    private let limits: MultipartLimits
    /// `CRLF--boundary`
    private let delimiter: [UInt8]
    private var state = State.preamble
    /// Bytes from the end of the last chunk that may begin a delimiter. It starts as a
    /// virtual CRLF so a body that begins with `--boundary` needs no line break before it.
    private var carry: [UInt8] = [13, 10]
    /// The bytes after a delimiter, or a header block, while they are being collected.
    private var lineBuffer: [UInt8] = []
    private var current: PartInProgress?
    private(set) var parts: [UploadedPart] = []
    private(set) var bodyBytes: Int64 = 0

    init(boundary: String, limits: MultipartLimits = MultipartLimits()) {
        self.boundary = boundary
        self.limits = limits
        delimiter = Array("\r\n--\(boundary)".utf8)
    }

    // MARK: Feeding

    mutating func feed(_ buffer: ByteBuffer) throws(MultipartError) {
        bodyBytes += Int64(buffer.readableBytes)
        guard bodyBytes <= limits.maxBodyBytes else {
            throw .tooLarge("the body is over \(ByteSize.format(limits.maxBodyBytes)), the most this endpoint accepts")
        }
        let result = buffer.withUnsafeReadableBytes { chunk -> MultipartError? in
            do {
                if carry.isEmpty {
                    try run(chunk)
                } else {
                    var joined = carry
                    carry = []
                    joined.append(contentsOf: chunk)
                    try joined.withUnsafeBytes { try run($0) }
                }
                return nil
            } catch let error as MultipartError {
                return error
            } catch {
                return .malformed("\(error)") // not reached: run throws only MultipartError
            }
        }
        if let result { throw result }
    }

    /// `feed` for bytes in memory (tests).
    mutating func feed(_ bytes: [UInt8]) throws(MultipartError) {
        try feed(ByteBuffer(bytes: bytes))
    }

    /// Call after the last chunk: throws unless the close delimiter was seen.
    func finish() throws(MultipartError) -> [UploadedPart] {
        switch state {
        case .epilogue:
            return parts
        case .preamble:
            throw .malformed("no \"--\(boundary)\" delimiter in the body")
        case .afterDelimiter, .headers, .body:
            throw .malformed("the body ended before the closing delimiter \"--\(boundary)--\"")
        }
    }

    private mutating func run(_ bytes: UnsafeRawBufferPointer) throws(MultipartError) {
        var index = 0
        while index < bytes.count {
            switch state {
            case .preamble, .body:
                index = try scanForDelimiter(bytes, from: index)
            case .afterDelimiter:
                index = try readAfterDelimiter(bytes, from: index)
            case .headers:
                index = try readHeaders(bytes, from: index)
            case .epilogue:
                return
            }
        }
    }

    /// Hands body bytes to the current part up to the next delimiter (or, when none is in
    /// this chunk, up to a possible start of one, which is carried over).
    private mutating func scanForDelimiter(_ bytes: UnsafeRawBufferPointer, from start: Int) throws(MultipartError) -> Int {
        let base = bytes.baseAddress! + start
        let available = bytes.count - start
        if let offset = firstDelimiter(in: UnsafeRawPointer(base), count: available) {
            try consumeBody(UnsafeRawBufferPointer(start: base, count: offset))
            try endPart()
            state = .afterDelimiter
            lineBuffer = []
            return start + offset + delimiter.count
        }
        // The longest tail that is a start of the delimiter must wait for the next chunk.
        var keep = 0
        for length in stride(from: min(delimiter.count - 1, available), through: 1, by: -1)
        where memcmp(base + available - length, delimiter, length) == 0 {
            keep = length
            break
        }
        try consumeBody(UnsafeRawBufferPointer(start: base, count: available - keep))
        carry = Array(UnsafeRawBufferPointer(start: base + available - keep, count: keep))
        return bytes.count
    }

    /// memchr for the CR that starts every delimiter, then memcmp for the rest: fast even
    /// in a debug build (glibc's memmem is not visible to Swift).
    private func firstDelimiter(in base: UnsafeRawPointer, count: Int) -> Int? {
        let length = delimiter.count
        var offset = 0
        while offset + length <= count {
            guard let carriageReturn = memchr(base + offset, 13, count - offset - length + 1) else { return nil }
            let position = base.distance(to: UnsafeRawPointer(carriageReturn))
            if memcmp(carriageReturn, delimiter, length) == 0 {
                return position
            }
            offset = position + 1
        }
        return nil
    }

    private mutating func consumeBody(_ bytes: UnsafeRawBufferPointer) throws(MultipartError) {
        guard !bytes.isEmpty, state == .body, var part = current else { return }
        current = nil
        part.hasher.update(bufferPointer: bytes)
        part.bytes += Int64(bytes.count)
        if part.filename == nil {
            guard part.text.count + bytes.count <= limits.maxFieldBytes else {
                throw .tooLarge("form field \"\(part.name)\" is over \(ByteSize.format(Int64(limits.maxFieldBytes))); send it as a file")
            }
            part.text.append(contentsOf: bytes)
        }
        current = part
    }

    private mutating func endPart() throws(MultipartError) {
        guard state == .body, let part = current else { return }
        current = nil
        parts.append(UploadedPart(
            name: part.name, filename: part.filename, contentType: part.contentType, bytes: part.bytes,
            sha256: Array(part.hasher.finalize()),
            text: part.filename == nil ? String(decoding: part.text, as: UTF8.self) : nil
        ))
    }

    /// `--` ends the body; otherwise only spaces or tabs (transport padding) may precede CRLF.
    private mutating func readAfterDelimiter(_ bytes: UnsafeRawBufferPointer, from start: Int) throws(MultipartError) -> Int {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            lineBuffer.append(byte)
            if lineBuffer.count == 1, byte == UInt8(ascii: "-") { continue }
            if lineBuffer == [UInt8(ascii: "-"), UInt8(ascii: "-")] {
                state = .epilogue
                return bytes.count
            }
            let count = lineBuffer.count
            if byte == 10, count >= 2, lineBuffer[count - 2] == 13,
               lineBuffer[..<(count - 2)].allSatisfy({ $0 == 32 || $0 == 9 }) {
                guard parts.count < limits.maxParts else {
                    throw .tooLarge("more than \(limits.maxParts) parts")
                }
                state = .headers
                lineBuffer = []
                return index
            }
            guard byte == 13 || byte == 32 || byte == 9, count <= 256 else {
                throw .malformed("unexpected bytes after the delimiter \"--\(boundary)\" (expected CRLF or \"--\")")
            }
        }
        return index
    }

    private mutating func readHeaders(_ bytes: UnsafeRawBufferPointer, from start: Int) throws(MultipartError) -> Int {
        var index = start
        while index < bytes.count {
            lineBuffer.append(bytes[index])
            index += 1
            guard lineBuffer.count <= limits.maxHeaderBytes else {
                throw .tooLarge("a part's header block is over \(ByteSize.format(Int64(limits.maxHeaderBytes)))")
            }
            let count = lineBuffer.count
            let endsBlock = (count == 2 && lineBuffer == [13, 10])
                || (count >= 4 && lineBuffer[(count - 4)...].elementsEqual([13, 10, 13, 10]))
            if endsBlock {
                current = try Self.parsePartHeaders(lineBuffer.dropLast(count == 2 ? 2 : 4))
                lineBuffer = []
                state = .body
                return index
            }
        }
        return index
    }

    // MARK: Part headers

    private static func parsePartHeaders(_ block: ArraySlice<UInt8>) throws(MultipartError) -> PartInProgress {
        var disposition: [UInt8]?
        var contentType: String?
        for line in splitLines(Array(block)) where !line.isEmpty {
            guard !line.contains(13), !line.contains(10) else {
                throw .malformed("a part header contains a bare CR or LF")
            }
            guard line.first != 32, line.first != 9 else {
                throw .malformed("folded part headers are not allowed")
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
                  line[..<colon].allSatisfy(isTokenByte) else {
                throw .malformed("bad part header line \"\(String(decoding: line.prefix(80), as: UTF8.self))\"")
            }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            let value = Array(trimmed(line[(colon + 1)...]))
            switch name {
            case "content-disposition":
                guard disposition == nil else { throw .malformed("a part has two Content-Disposition headers") }
                disposition = value
            case "content-type":
                guard contentType == nil else { throw .malformed("a part has two Content-Type headers") }
                contentType = String(decoding: value, as: UTF8.self)
            default:
                break // Content-Transfer-Encoding and the like are reported by nobody
            }
        }
        guard let disposition else {
            throw .malformed("a part has no Content-Disposition header")
        }
        let parsed = try HeaderValue(parsing: disposition)
        guard parsed.value.lowercased() == "form-data" else {
            throw .malformed("a part's Content-Disposition is \"\(parsed.value)\", expected form-data")
        }
        guard let name = parsed.parameter("name") else {
            throw .malformed("a part's Content-Disposition has no name parameter")
        }
        return PartInProgress(name: name, filename: parsed.parameter("filename"), contentType: contentType)
    }

    private static func splitLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = 0
        var index = 0
        while index + 1 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10 {
                lines.append(bytes[lineStart..<index])
                index += 2
                lineStart = index
            } else {
                index += 1
            }
        }
        lines.append(bytes[lineStart...])
        return lines
    }
}

// MARK: Header values with parameters
