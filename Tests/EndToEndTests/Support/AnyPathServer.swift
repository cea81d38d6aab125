import Foundation
import LabFixtures
import LabServer
import LabVocabulary
import Synchronization
import TestServers

/// A bare HTTP/1.1 server on a free loopback port that serves one fixture at any path, with
/// `Range: bytes=N-` and the fixture's ETag, one connection per response. LabServer serves only
/// fixture names of [A-Za-z0-9._-], so hostile paths and headers come from here, and so do
/// servers that break HTTP's rules (`Behaviour`).
final class AnyPathServer: Sendable {
    /// How the server answers.
    enum Behaviour: Sendable {
        /// The fixture, honouring `Range` and `If-Range`.
        case honest
        /// Every request gets `416` with `Content-Range: bytes */0`.
        case alwaysUnsatisfiable
        /// A server that ignores `If-Range` while the file changes under it: a request without
        /// `Range` gets the fixture, cut after `dropAfter` bytes; a resume gets a 206 at the
        /// offset asked for, of `newVersion`, with its own ETag and total and no digest.
        case newVersionOnResume(dropAfter: Int64, newVersion: Fixture)
        /// A 200 without Content-Length whose body never ends (the client leaves, or 120 s pass);
        /// a request body is read meanwhile and dropped.
        case endlessBody
    }

    let port: Int
    private let listener: Int32
    private let fixture: Fixture
    private let extraHeaders: [String]
    private let behaviour: Behaviour
    /// The fixture's own ETag, or the one given (a hostile one, say).
    private let etag: String
    private let requests = Mutex<[String]>([])
    private let heads = Mutex<[String]>([])

    /// The request lines received so far, e.g. `GET /files/x HTTP/1.1`.
    var requestLines: [String] { requests.withLock { $0 } }

    /// The whole request heads received so far, headers included.
    var requestHeads: [String] { heads.withLock { $0 } }

    init(fixture: Fixture, extraHeaders: [String] = [], behaviour: Behaviour = .honest, etag: String? = nil) throws {
        self.fixture = fixture
        self.etag = etag ?? fixture.etag
        self.extraHeaders = extraHeaders
        self.behaviour = behaviour
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
        heads.withLock { $0.append(head) }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        switch behaviour {
        case .honest:
            serveFixture(connection, headers: headers)
        case .alwaysUnsatisfiable:
            sendText(connection, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */0\r\n"
                + "Content-Length: 0\r\nConnection: close\r\n\r\n")
        case .newVersionOnResume(let dropAfter, let newVersion):
            if let offset = headers["range"].flatMap(Lesson05Tests.offset(ofRange:)), offset < newVersion.size {
                sendBody(connection, of: newVersion, from: offset, to: newVersion.size, head: [
                    "HTTP/1.1 206 Partial Content", "Content-Length: \(newVersion.size - offset)",
                    "Content-Range: bytes \(offset)-\(newVersion.size - 1)/\(newVersion.size)", "ETag: \(newVersion.etag)",
                ])
            } else {
                sendBody(connection, of: fixture, from: 0, to: min(dropAfter, fixture.size), head: [
                    "HTTP/1.1 200 OK", "Content-Length: \(fixture.size)", "Accept-Ranges: bytes", "ETag: \(fixture.etag)",
                ])
            }
        case .endlessBody:
            Thread { [self] in drain(connection) }.start()
            guard sendText(connection, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n")
            else { return }
            let chunk = [UInt8](repeating: 0x61, count: 16 << 10)
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, chunk.withUnsafeBytes({ sendAll(connection, $0) }) {}
        }
    }

    /// `head`'s lines, then bytes `start..<end` of `fixture`; the connection closes after them.
    private func sendBody(_ connection: Int32, of fixture: Fixture, from start: Int64, to end: Int64, head: [String]) {
        let response = (head + ["Content-Type: application/octet-stream", "Connection: close"])
            .joined(separator: "\r\n") + "\r\n\r\n"
        guard sendText(connection, response) else { return }
        var buffer = Data(count: 64 << 10)
        var offset = start
        while offset < end {
            let count = Int(min(Int64(buffer.count), end - offset))
            let sent = buffer.withUnsafeMutableBytes { bytes in
                let chunk = UnsafeMutableRawBufferPointer(rebasing: bytes[0..<count])
                fixture.fill(chunk, from: offset)
                return sendAll(connection, UnsafeRawBufferPointer(chunk))
            }
            guard sent else { return }
            offset += Int64(count)
        }
    }

    /// Reads and drops whatever the client sends, until it closes.
    private func drain(_ connection: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
        }
    }

    private func serveFixture(_ connection: Int32, headers: [String: String]) {
        var start: Int64 = 0
        var status = "200 OK"
        var responseHeaders = ["Accept-Ranges: bytes", "ETag: \(etag)", "Last-Modified: \(fixture.lastModified)"]
        if let range = headers["range"], let offset = Lesson05Tests.offset(ofRange: range),
           headers["if-range"] == nil || headers["if-range"] == etag {
            guard offset < fixture.size else {
                sendText(connection, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */\(fixture.size)\r\n"
                    + "Content-Length: 0\r\nConnection: close\r\n\r\n")
                return
            }
            start = offset
            status = "206 Partial Content"
            responseHeaders.append("Content-Range: bytes \(offset)-\(fixture.size - 1)/\(fixture.size)")
        }
        sendBody(connection, of: fixture, from: start, to: fixture.size,
                 head: ["HTTP/1.1 \(status)", "Content-Length: \(fixture.size - start)"] + responseHeaders + extraHeaders)
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
