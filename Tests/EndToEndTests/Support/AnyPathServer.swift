import Foundation
import LabServer
import Synchronization

/// A bare HTTP/1.1 server on a free loopback port that serves one fixture at any path, with
/// `Range: bytes=N-` and the fixture's ETag, one connection per response. LabServer serves only
/// fixture names of [A-Za-z0-9._-], so hostile paths and headers come from here.
final class AnyPathServer: Sendable {
    let port: Int
    private let listener: Int32
    private let fixture: Fixture
    private let extraHeaders: [String]
    private let requests = Mutex<[String]>([])

    /// The request lines received so far, e.g. `GET /files/x HTTP/1.1`.
    var requestLines: [String] { requests.withLock { $0 } }

    init(fixture: Fixture, extraHeaders: [String] = []) throws {
        self.fixture = fixture
        self.extraHeaders = extraHeaders
        guard let socket = boundLoopbackSocket() else { throw AnyPathServerError("cannot bind a loopback port") }
        guard listen(socket.descriptor, 16) == 0 else {
            close(socket.descriptor)
            throw AnyPathServerError("cannot listen on a loopback port")
        }
        listener = socket.descriptor
        port = socket.port
        Thread { [self] in acceptConnections() }.start()
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptConnections() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            Thread { [self] in
                serve(connection)
                close(connection)
            }.start()
        }
    }

    private func serve(_ connection: Int32) {
        guard let head = readHead(connection) else { return }
        let lines = head.components(separatedBy: "\r\n")
        requests.withLock { $0.append(lines[0]) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var start: Int64 = 0
        var status = "200 OK"
        var responseHeaders = ["Accept-Ranges: bytes", "ETag: \(fixture.etag)", "Last-Modified: \(fixture.lastModified)"]
        if let range = headers["range"], let offset = Lesson05Tests.offset(ofRange: range),
           headers["if-range"] == nil || headers["if-range"] == fixture.etag {
            guard offset < fixture.size else {
                sendText(connection, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(fixture.size)\r\n"
                    + "Content-Length: 0\r\nConnection: close\r\n\r\n")
                return
            }
            start = offset
            status = "206 Partial Content"
            responseHeaders.append("Content-Range: bytes \(offset)-\(fixture.size - 1)/\(fixture.size)")
        }
        let response = (["HTTP/1.1 \(status)", "Content-Type: application/octet-stream",
                         "Content-Length: \(fixture.size - start)", "Connection: close"]
            + responseHeaders + extraHeaders).joined(separator: "\r\n") + "\r\n\r\n"
        guard sendText(connection, response) else { return }
        var buffer = Data(count: 64 << 10)
        var offset = start
        while offset < fixture.size {
            let count = Int(min(Int64(buffer.count), fixture.size - offset))
            let fixture = self.fixture
            let sent = buffer.withUnsafeMutableBytes { bytes in
                let chunk = UnsafeMutableRawBufferPointer(rebasing: bytes[0..<count])
                fixture.fill(chunk, from: offset)
                return sendAll(connection, UnsafeRawBufferPointer(chunk))
            }
            guard sent else { return }
            offset += Int64(count)
        }
    }

    /// The request head, up to the blank line; nil if the peer closes first.
    private func readHead(_ connection: Int32) -> String? {
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while received.count < 64 << 10 {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            received += buffer[0..<count]
            if let range = received.firstRange(of: end) {
                return String(decoding: received[..<range.lowerBound], as: UTF8.self)
            }
        }
        return nil
    }

    @discardableResult
    private func sendText(_ connection: Int32, _ text: String) -> Bool {
        Array(text.utf8).withUnsafeBytes { sendAll(connection, $0) }
    }

    /// Writes everything, or returns false once the peer has gone (no SIGPIPE).
    private func sendAll(_ connection: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = send(connection, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }
}

struct AnyPathServerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
