import Foundation
import TestFolders
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabKit
@testable import LabPhone
import LabServer
import LabVocabulary
import Synchronization
import Testing

/// The transfer service's exchanges through libcurl (`CurlExchange`), against the lab server over a real
/// socket: each point of its contract.
@Suite final class CurlExchangeTests {
    let server: LabServer

    init() throws { server = try LabServer.start() }
    deinit { server.stop() }

    /// What one run handed over.
    private struct Run {
        var error: URLError?
        var responses: [HTTPURLResponse] = []
        var body = Data()
    }

    private func get(_ request: URLRequest, log: HTTPExchangeLog = HTTPExchangeLog(), idleSeconds: Double = 10,
                     stopAfter: Int? = nil, refuse: Bool = false) -> Run {
        var run = Run()
        var stopped = false
        run.error = CurlExchange(idleSeconds: idleSeconds, log: log).run(
            request, isStopped: { stopped },
            didReceive: { response in
                run.responses.append(response)
                return !refuse
            },
            didReceiveBody: { piece in
                run.body.append(contentsOf: piece)
                if let stopAfter, run.body.count >= stopAfter { stopped = true }
                return true
            })
        return run
    }

    private func bytes(of fixture: Fixture) -> Data {
        var data = Data(count: Int(fixture.size))
        data.withUnsafeMutableBytes { fixture.fill($0, from: 0) }
        return data
    }

    @Test func redirectsAreFollowedWithTheSameHeaderFields() throws {
        let fixture = Fixture(name: "curl-redirects", size: 3 << 20 + 12_345)
        var request = URLRequest(url: server.url(for: fixture, faults: "redirect:3", run: "redirects"))
        request.setValue("bytes=1000-", forHTTPHeaderField: "Range")
        let hops = Mutex(0)
        let log = HTTPExchangeLog()
        log.observe { event in if case .redirect = event { hops.withLock { $0 += 1 } } }
        let run = get(request, log: log)
        #expect(run.error == nil)
        #expect(run.responses.map(\.statusCode) == [206])
        #expect(run.body == bytes(of: fixture).dropFirst(1000))
        let sent = server.requestLog.filter { $0.target.contains("run=redirects") }
        #expect(sent.count == 4 && sent.allSatisfy { $0.range == "bytes=1000-" }, "\(sent.map(\.range))")
        #expect(run.responses.first?.url?.absoluteString.hasSuffix(sent.last?.target ?? "?") == true)
        #expect(hops.withLock { $0 } == 3)
        let exchange = try #require(log.exchanges.first)
        #expect(log.exchanges.count == 1 && exchange.status == 206 && exchange.range == "bytes=1000-"
                && exchange.bodyBytes == fixture.size - 1000, "\(log.exchanges)")
    }

    @Test func aSeventeenthRedirectIsTooMany() {
        let fixture = Fixture(name: "curl-redirect-loop", size: 1000)
        let run = get(URLRequest(url: server.url(for: fixture, faults: "redirect:17", run: "loop")))
        #expect(run.error?.code == .httpTooManyRedirects)
        #expect(run.responses.isEmpty && run.body.isEmpty)
        #expect(server.requestLog.filter { $0.target.contains("run=loop") }.count == 17)
    }

    @Test func aDroppedConnectionIsLostAndSaysWhatCurlSaw() {
        let fixture = Fixture(name: "curl-drop", size: 4 << 20)
        let run = get(URLRequest(url: server.url(for: fixture, faults: "drop:1MiB", run: "drop")))
        #expect(run.error?.code == .networkConnectionLost)
        #expect(run.error?.localizedDescription.contains("transfer closed with 3145728 bytes remaining") == true,
                "\(run.error?.localizedDescription ?? "")")
        #expect(run.body == bytes(of: fixture).prefix(1 << 20))
    }

    @Test func silenceLongerThanTheIdleTimeIsATimeOut() {
        let fixture = Fixture(name: "curl-stall", size: 4 << 20)
        let started = ContinuousClock.now
        let run = get(URLRequest(url: server.url(for: fixture, faults: "stall:1MiB", run: "stall")), idleSeconds: 1)
        #expect(run.error?.code == .timedOut)
        #expect(run.body == bytes(of: fixture).prefix(1 << 20))
        #expect(ContinuousClock.now - started < .seconds(4))
    }

    @Test func nothingIsHandedOverOnceStopped() {
        let fixture = Fixture(name: "curl-stop", size: 64 << 20)
        let run = get(URLRequest(url: server.url(for: fixture, run: "stop")), stopAfter: 1 << 20)
        #expect(run.error?.code == .cancelled)
        // The piece that crossed 1 MiB is the last one: libcurl hands over at most 16 KiB at once.
        #expect(run.body.count >= 1 << 20 && run.body.count < (1 << 20) + (16 << 10), "\(run.body.count)")
        #expect(run.body == bytes(of: fixture).prefix(run.body.count))
    }

    @Test func aRefusedResponseGetsNoBody() {
        let run = get(URLRequest(url: server.url(for: Fixture(name: "curl-refused", size: 1 << 20))), refuse: true)
        #expect(run.error?.code == .cancelled)
        #expect(run.responses.map(\.statusCode) == [200] && run.body.isEmpty)
    }

    /// An upload's body is read from its file as it goes: the server counts every byte, and
    /// `didSend` ends at the file's size.
    @Test func anUploadSendsItsFileAndHearsTheAnswer() throws {
        let part = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        var body = Data("--lab\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n".utf8)
        body += part + Data("\r\n--lab--\r\n".utf8)
        let file = TestFolders.root.appendingPathComponent("curl-upload-\(getpid()).body")
        let partFile = file.appendingPathExtension("part")
        try body.write(to: file)
        try part.write(to: partFile)
        defer { for made in [file, partFile] { try? FileManager.default.removeItem(at: made) } }
        var request = URLRequest(url: server.baseURL.appendingPathComponent("upload"))
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=lab", forHTTPHeaderField: "Content-Type")
        var sent: [Int64] = []
        var answer = Data()
        var status: Int?
        let error = CurlExchange(idleSeconds: 10, log: HTTPExchangeLog()).run(
            request, body: .init(file: file, size: Int64(body.count)), isStopped: { false },
            didSend: { bytes, total in if total == Int64(body.count) { sent.append(bytes) } },
            didReceive: { response in
                status = response.statusCode
                return true
            },
            didReceiveBody: { piece in
                answer.append(contentsOf: piece)
                return true
            })
        #expect(error == nil)
        #expect(status == 200)
        #expect(sent.last == Int64(body.count) && sent == sent.sorted())
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.contains("\"bytes\":\(part.count),\"sha256\":\"\(try FileDigest.sha256Hex(of: partFile))\"")
                && text.contains("\"bodyBytes\":\(body.count)"), "\(text)")
    }

    @Test func aMissingBodyFileSendsNothing() {
        let before = server.requestLog.count
        let missing = URL(fileURLWithPath: "/nonexistent/curl-upload.body")
        var request = URLRequest(url: server.baseURL.appendingPathComponent("upload"))
        request.httpMethod = "POST"
        let error = CurlExchange(idleSeconds: 10, log: HTTPExchangeLog()).run(
            request, body: .init(file: missing, size: 10), isStopped: { false },
            didReceive: { _ in true }, didReceiveBody: { _ in true })
        #expect(error?.code == .fileDoesNotExist)
        #expect(server.requestLog.count == before)
    }

    @Test func onlyHTTPIsFetched() {
        let run = get(URLRequest(url: URL(fileURLWithPath: "/etc/hostname")))
        #expect(run.error?.code == .unsupportedURL)
        #expect(run.responses.isEmpty && run.body.isEmpty)
    }
}
