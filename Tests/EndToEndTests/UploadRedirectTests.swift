import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabKit
@testable import LabPhone
import LabServer
import TestServers
import Testing

/// How the transfer service's exchanges (`CurlExchange`) follow a redirect of an upload: a 307
/// sends the body again, a 303 asks for the target with a GET and no body, as URLSession does.
@Suite final class UploadRedirectTests {
    let server: LabServer
    let file: URL
    let body: Data

    init() throws {
        server = try LabServer.start()
        body = Data("--lab\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n\r\n".utf8)
            + Data(repeating: 5, count: 100_000) + Data("\r\n--lab--\r\n".utf8)
        file = try scratchDirectory().appendingPathComponent("upload.body")
        try body.write(to: file)
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
    }

    /// POSTs the file to a server that answers `status` with a Location of `target`.
    private func upload(redirectedBy status: String, to target: URL) throws -> (error: URLError?, status: Int?, answer: Data) {
        let redirecting = try CannedHTTPServer(answer: Data("HTTP/1.1 \(status)\r\nLocation: \(target.absoluteString)\r\nContent-Length: 0\r\n\r\n".utf8))
        defer { redirecting.stop() }
        var request = URLRequest(url: redirecting.url)
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=lab", forHTTPHeaderField: "Content-Type")
        var answer = Data()
        var answered: Int?
        let error = CurlExchange(idleSeconds: 10, log: HTTPExchangeLog()).run(
            request, body: .init(file: file, size: Int64(body.count)), isStopped: { false },
            didReceive: { response in
                answered = response.statusCode
                return true
            },
            didReceiveBody: { piece in
                answer.append(contentsOf: piece)
                return true
            })
        #expect(redirecting.requests == 1)
        return (error, answered, answer)
    }

    @Test func a307SendsTheBodyAgain() throws {
        let ran = try upload(redirectedBy: "307 Temporary Redirect", to: server.baseURL.appendingPathComponent("upload"))
        #expect(ran.error == nil && ran.status == 200)
        let json = String(decoding: ran.answer, as: UTF8.self)
        #expect(json.contains("\"bytes\":100000,") && json.contains("\"bodyBytes\":\(body.count)"), "\(json)")
        #expect(server.requestLog.last?.method.rawValue == "POST")
    }

    @Test func a303IsFollowedWithAGetAndNoBody() throws {
        let fixture = Fixture(name: "after-upload.bin", size: 1000)
        let ran = try upload(redirectedBy: "303 See Other", to: server.url(for: fixture))
        #expect(ran.error == nil && ran.status == 200, "\(String(describing: ran.error)) \(ran.error?.localizedDescription ?? "")")
        var expected = Data(count: 1000)
        expected.withUnsafeMutableBytes { fixture.fill($0, from: 0) }
        #expect(ran.answer == expected)
        let request = try #require(server.requestLog.last)
        #expect(request.method.rawValue == "GET" && request.target.contains("after-upload.bin"))
    }
}
