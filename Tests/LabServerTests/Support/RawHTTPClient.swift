import Foundation
import LabPlatform
import LabServer
import LabVocabulary

/// A response exactly as it came off the wire.
struct RawResponse {
    let statusLine: String
    let status: Int
    /// Keys are lowercased; use `header(_:)` to look one up.
    let headers: [String: String]
    let body: [UInt8]
    /// The server closed the connection before sending Content-Length body bytes.
    let closedEarly: Bool
    /// The receive timeout expired before the body was complete.
    let timedOut: Bool

    func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }
}

extension RawResponse: CustomStringConvertible {
    /// Failed expectations print this instead of megabytes of body.
    var description: String {
        "\(statusLine), \(body.count) body bytes, closedEarly: \(closedEarly), timedOut: \(timedOut), headers: \(headers)"
    }
}

struct RawHTTPError: Error, CustomStringConvertible {
    let description: String
}

/// A deliberately tiny HTTP/1.1 client over a blocking POSIX socket. Tests need to see
/// what a real client library would hide or "fix": early closes, lying lengths, stalls.
final class RawHTTPConnection {
    private let socketDescriptor: Int32
    /// Bytes received but not yet consumed (the start of a pipelined next response).
    private var pending: [UInt8] = []

    init(port: Int, receiveTimeout: Double = 10) throws {
        socketDescriptor = socket(AF_INET, Platform.streamSocket, 0)
        guard socketDescriptor >= 0 else { throw RawHTTPError(description: "socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // No close here: every stored property is set, so a throw still runs deinit, which closes
        // the socket. A second close would close whatever descriptor the process had opened under
        // the same number meanwhile (a server's connection: SwiftNIO then stops the process).
        guard connected == 0 else { throw RawHTTPError(description: "connect() to port \(port) failed") }
        setReceiveTimeout(receiveTimeout)
    }

    /// Sends every write at once instead of letting Nagle's algorithm merge small ones.
    func disableNagle() {
        var on: Int32 = 1
        setsockopt(socketDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close(socketDescriptor)
    }

    func setReceiveTimeout(_ seconds: Double) {
        var timeout = Platform.socketTimeout(seconds: seconds)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func write(_ text: String) throws {
        try write(bytes: Array(text.utf8))
    }

    func write(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { buffer in
                send(socketDescriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { throw RawHTTPError(description: "send() failed") }
            offset += written
        }
    }

    /// Sends a request with `Host` and any extra headers, in the order given.
    func sendRequest(_ method: String, _ target: String, headers: [(String, String)] = []) throws {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers {
            text += "\(name): \(value)\r\n"
        }
        try write(text + "\r\n")
    }

    /// Reads one response. A HEAD response has no body whatever its Content-Length says.
    /// With `untilClose` the body is everything up to the close, ignoring Content-Length.
    func readResponse(isHead: Bool = false, untilClose: Bool = false) throws -> RawResponse {
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = findHeaderEnd()
            if headerEnd == nil {
                guard case .data = receiveMore() else {
                    throw RawHTTPError(description: "connection ended before the response headers")
                }
            }
        }
        let headerText = String(decoding: pending[..<headerEnd!], as: UTF8.self)
        pending.removeFirst(headerEnd! + 4)
        var lines = headerText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let statusParts = statusLine.split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw RawHTTPError(description: "bad status line \(statusLine)")
        }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }

        let expectedLength = isHead ? 0 : untilClose ? Int.max : Int(headers["content-length"] ?? "0") ?? 0
        var closedEarly = false
        var timedOut = false
        receiving: while pending.count < expectedLength {
            switch receiveMore() {
            case .data:
                break
            case .closed:
                closedEarly = !untilClose
                break receiving
            case .timedOut:
                timedOut = true
                break receiving
            }
        }
        let bodyLength = min(expectedLength, pending.count)
        let body = Array(pending[..<bodyLength])
        pending.removeFirst(bodyLength)
        return RawResponse(statusLine: statusLine, status: status, headers: headers, body: body,
                           closedEarly: closedEarly, timedOut: timedOut)
    }

    /// True when the server closes the connection within `seconds` without sending more.
    func serverCloses(within seconds: Double) -> Bool {
        setReceiveTimeout(seconds)
        return pending.isEmpty && receiveMore() == .closed
    }

    private enum Received: Equatable { case data, closed, timedOut }

    private func receiveMore() -> Received {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            pending += chunk[..<count]
            return .data
        }
        return count == 0 ? .closed : (errno == EAGAIN || errno == EWOULDBLOCK) ? .timedOut : .closed
    }

    private func findHeaderEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for index in 0...(pending.count - 4)
        where pending[index] == 13 && pending[index + 1] == 10 && pending[index + 2] == 13 && pending[index + 3] == 10 {
            return index
        }
        return nil
    }
}

/// One request on a fresh connection.
func fetch(_ server: LabServer, _ method: String = "GET", _ target: String, headers: [(String, String)] = [],
           timeout: Double = 10, untilClose: Bool = false) throws -> RawResponse {
    let connection = try RawHTTPConnection(port: server.port, receiveTimeout: timeout)
    try connection.sendRequest(method, target, headers: headers)
    return try connection.readResponse(isHead: method == "HEAD", untilClose: untilClose)
}
