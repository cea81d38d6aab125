import Foundation
import LabFixtures
import LabKit
import LabPlatform
import LabVocabulary
import Testing

/// `lab serve`, run as a child process.
@Suite(.serialized)
struct LabServeTests {
    @Test func servesWhatItPrintsAndStopsOnCtrlC() throws {
        let child = try ChildProcess("lab", ["serve", "--port", "0"])
        try child.start()
        let deadline = Date().addingTimeInterval(20)
        var banner = ""
        while !banner.contains("Press Ctrl-C to stop.") && Date() < deadline {
            usleep(50_000)
            banner = child.stdoutSoFar
        }
        let lines = banner.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let urlLine = try #require(lines.first { $0.hasPrefix("1MiB") }, "\(banner)")
        let digestLine = try #require(lines.first { $0.hasPrefix("sha256 ") })
        let url = try #require(urlLine.split(separator: " ").last.map(String.init))

        let file = try scratchDirectory().appendingPathComponent("sample.bin")
        let curl = try ChildProcess.runProgram(try #require(executable(named: "curl")),
                                               ["--silent", "--fail", "--output", file.path, url])
        #expect(curl.status == 0)
        #expect(fileSize(file) == 1 << 20)
        #expect(try "sha256 " + FileDigest.sha256Hex(of: file) == digestLine)

        kill(child.process.processIdentifier, SIGINT)
        let stopped = child.wait(timeout: 10)
        #expect(stopped.status == 0, "\(stopped.stderr)")
    }

    @Test(arguments: [
        (["serve", "--port", "99999"], "lab serve: --port must be between 0 and 65535\n"),
        (["bogus"], "lab: Unexpected argument 'bogus'\n"),
    ])
    func badInputGetsOneLineAndExit64(arguments: [String], message: String) throws {
        let finished = try ChildProcess.run("lab", arguments)
        #expect(finished.status == 64)
        #expect(finished.stderr == message)
        #expect(finished.stdout.isEmpty)
    }

    /// 2,100 requests with a 60 KB query and a 16 KB Range header, each for a URL of its
    /// own: the server keeps a bounded log and bounded attempt counters, so its memory stays flat.
    @Test func memoryStaysFlatUnderLargeRequests() throws {
        let child = try ChildProcess("lab", ["serve", "--port", "0"])
        try child.start()
        defer { kill(child.process.processIdentifier, SIGINT); _ = child.wait(timeout: 10) }
        let deadline = Date().addingTimeInterval(20)
        while !child.stdoutSoFar.contains("Press Ctrl-C to stop.") && Date() < deadline { usleep(50_000) }
        let port = try #require(child.stdoutSoFar.split(separator: "\n").first?.split(separator: ":").last.flatMap { Int($0) },
                                "\(child.stdoutSoFar)")
        let pid = child.process.processIdentifier

        let padding = String(repeating: "p", count: 60_000)
        let range = "bytes=0-" + String(repeating: "0", count: 16_000)
        var residentAfterRound: [Int64] = []
        for round in 0..<3 {
            try withKeepAliveConnection(port: port) { send in
                for index in 0..<700 {
                    let target = "/fixtures/flat?size=1&pad=\(padding)&run=r\(round)-\(index)"
                    let status = try send("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nRange: \(range)\r\n\r\n")
                    #expect(status == 200 || status == 206, "round \(round), request \(index): \(status)")
                }
            }
            residentAfterRound.append(try #require(Platform.residentBytes(ofProcess: pid)))
        }
        // With the log's entries neither cut nor capped, a round added 57 MB. The first round grows
        // the heap to its working size (the log's 8 MiB fill in its first hundred requests).
        let growth = residentAfterRound.last! - residentAfterRound[1]
        #expect(growth < 32 << 20, "resident bytes after each round: \(residentAfterRound)")
    }

}

/// One keep-alive connection to 127.0.0.1:`port`; `body` sends whole requests through `send`,
/// which returns the status of each answer once its (small) body has been read.
private func withKeepAliveConnection(port: Int, _ body: ((String) throws -> Int) throws -> Void) throws {
    let descriptor = socket(AF_INET, Platform.streamSocket, 0)
    guard descriptor >= 0 else { throw AnyPathServerError("socket() failed") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw AnyPathServerError("cannot connect to port \(port)") }
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    try body { request in
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw AnyPathServerError("the server closed the connection") }
            sent += count
        }
        while true {
            if let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if received.count >= end.upperBound + length {
                    received.removeFirst(end.upperBound + length)
                    return Int(head.split(separator: " ")[1]) ?? 0
                }
            }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { throw AnyPathServerError("the server closed the connection") }
            received += buffer[..<count]
        }
    }
}
