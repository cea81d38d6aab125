// LabKit's download task with resume data runs on Linux only; on Apple's systems lesson 05 uses
// Apple's own, and there is no second caller to agree with.
#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import LabKit
import Synchronization
import TestFolders
import TestServers
import Testing

extension InProcessTransfers {
    /// Both callers of `ResumeRules`, against a real server: `PartialFile` (lessons 02, 03, 04,
    /// 08) and the download task that resumes from resume data (lesson 05 on Linux).
    @Suite final class ResumeRulesAgreementTests {
        static let body = Data((0..<1000).map { UInt8($0 % 251) })
        /// The lab's folder, made by a test, goes with the test (as in ResumableDownloadTaskTests).
        private let labFolderWasThere = FileManager.default.fileExists(atPath: LabFolders.mine.path)
        deinit { if !labFolderWasThere { try? FileManager.default.removeItem(at: LabFolders.mine) } }

        /// A 416 with no ETag and no Last-Modified of its own, as servers send their error answers.
        /// The request carried If-Range, so the server's version still matched: a partial file as
        /// long as the 416's total is whole. Both callers finish it, and neither fetches a byte.
        @Test func a416WithoutAValidatorFinishesTheFileForBoth() throws {
            let server = try CannedHTTPServer(answer: Data(
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */1000\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8))
            defer { server.stop() }

            let file = TestFolders.root.appendingPathComponent("agreement-\(UUID().uuidString).bin")
            try Self.body.write(to: file)
            defer { try? FileManager.default.removeItem(at: file); ResumeState.remove(for: file) }
            try ResumeState(url: server.url.absoluteString, validator: "\"v1\"", total: 1000).save(for: file)
            let partial = PartialFile(url: server.url, file: file, log: { _ in }, reportProgress: { _, _ in })
            let request = partial.nextRequest()
            #expect(request.value(forHTTPHeaderField: "Range") == "bytes=1000-" && request.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
            let response = try #require(try Self.response(to: request))
            let decision = partial.decide(response)
            guard case .complete = decision else {
                Issue.record("PartialFile decided \(decision)")
                return
            }

            let tempName = "CFNetworkDownload_\(UUID().uuidString.prefix(8)).tmp"
            try FileManager.default.createDirectory(at: LabFolders.temporary, withIntermediateDirectories: true)
            try Self.body.write(to: LabFolders.temporary.appendingPathComponent(tempName))
            let blob = try ResumeData(downloadURL: server.url.absoluteString, bytesReceived: 1000, entityTag: "\"v1\"",
                                      serverDownloadDate: nil, tempFileName: tempName).encoded(as: .keyedArchive)
            let heard = HeardDownload()
            let session = ResumableDownloadSession(configuration: .ephemeral, delegate: heard, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            session.downloadTask(withResumeData: blob).resume()
            #expect(heard.waitForCompletion())
            #expect(heard.events == ["finished 416", "completed nil"] && heard.finishedBytes == Self.body, "\(heard.events)")
            #expect(server.requests == 2)
        }

        /// The response to `request`, through a data task.
        private static func response(to request: URLRequest) throws -> URLResponse? {
            let answered = DispatchSemaphore(value: 0)
            let response = Mutex<URLResponse?>(nil)
            URLSession.shared.dataTask(with: request) { _, answer, _ in
                response.withLock { $0 = answer }
                answered.signal()
            }.resume()
            guard answered.wait(timeout: .now() + 30) == .success else { return nil }
            return response.withLock { $0 }
        }
    }
}
#endif
