// LabKit's download task with resume data exists on Linux only: on Apple's systems the lessons run
// Apple's own, and these tests of the stand-in have nothing to test.
#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import LabFixtures
import LabKit
import LabServer
import Synchronization
import Testing

/// What a download delegate heard, in order, and the bytes `didFinishDownloadingTo` was handed.
final class HeardDownload: NSObject, URLSessionDownloadDelegate, Sendable {
    private let heard = Mutex((events: [String](), finished: Data?.none, errors: [any Error]()))
    private let completions = DispatchSemaphore(value: 0)

    var events: [String] { heard.withLock { $0.events } }
    var finishedBytes: Data? { heard.withLock { $0.finished } }
    var lastError: (any Error)? { heard.withLock { $0.errors.last } }

    func note(_ event: String) { heard.withLock { $0.events.append(event) } }

    /// Waits for the next `didCompleteWithError`.
    func waitForCompletion() -> Bool { completions.wait(timeout: .now() + 30) == .success }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        note("resumed at \(fileOffset)")
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let bytes = try? Data(contentsOf: location)
        heard.withLock {
            $0.events.append("finished \((downloadTask.response as? HTTPURLResponse)?.statusCode ?? 0)")
            $0.finished = bytes
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        heard.withLock {
            $0.events.append("completed \((error as? URLError)?.code.rawValue.description ?? (error == nil ? "nil" : "\(error!)"))")
            if let error { $0.errors.append(error) }
        }
        completions.signal()
    }
}

extension InProcessTransfers {
    /// `ResumableDownloadSession` and `ResumableDownloadTask`, through Apple's API only, against the
    /// lab server over real sockets.
    @Suite(.serialized)
    final class ResumableDownloadTaskTests {
        let server: LabServer
        /// The tasks keep their files in the lab's folder under this process's own temporary
        /// folder, the system's: made by a test, it goes with the test.
        private let labFolderWasThere = FileManager.default.fileExists(atPath: LabFolders.mine.path)
        init() throws { server = try LabServer.start() }
        deinit {
            server.stop()
            if !labFolderWasThere { try? FileManager.default.removeItem(at: LabFolders.mine) }
        }

        private func body(_ fixture: Fixture) -> Data {
            var data = Data(count: Int(fixture.size))
            data.withUnsafeMutableBytes { fixture.fill($0, from: 0) }
            return data
        }

        private func session(_ delegate: HeardDownload) -> URLSession {
            ResumableDownloadSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        }

        /// A task under way in `session`: resumed, then given 0.3 s, a little over 1 MiB at 4 MiB/s.
        private func underWay(_ session: URLSession, _ url: URL) -> URLSessionDownloadTask {
            let task = session.downloadTask(with: url)
            task.resume()
            Thread.sleep(forTimeInterval: 0.3)
            return task
        }

        /// Presses Pause on `task` and waits for both of its ends: the task's completion and the
        /// handler's blob (nil for none).
        private func pause(_ task: URLSessionDownloadTask, _ heard: HeardDownload) throws -> Data? {
            let handedOver = DispatchSemaphore(value: 0)
            let blob = Mutex<Data?>(nil)
            task.cancel(byProducingResumeData: { data in
                heard.note("handed over \(data == nil ? "nil" : "a blob")")
                blob.withLock { $0 = data }
                handedOver.signal()
            })
            try #require(handedOver.wait(timeout: .now() + 30) == .success)
            return blob.withLock { $0 }
        }

        /// As on Apple's systems, a download task does not fail on an HTTP status: the error page
        /// is the download, and the delegate reads the status.
        @Test func anErrorPageIsDownloadedLikeAnyBody() throws {
            let heard = HeardDownload()
            let session = session(heard)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(for: Fixture(name: "missing", size: 1 << 20), faults: "status:404", run: UUID().uuidString)
            session.downloadTask(with: url).resume()
            #expect(heard.waitForCompletion())
            #expect(heard.events == ["finished 404", "completed nil"])
            #expect(heard.finishedBytes == Data("404 Not Found (scripted fault, attempt 1)\n".utf8))
        }

        /// Pause: the task completes cancelled first, then the handler gets the blob, whose task
        /// asks for the rest and ends with the exact file.
        @Test func pauseHandsOverResumeDataThatFinishesTheFile() throws {
            let fixture = Fixture(name: "paused", size: 8 << 20)
            let heard = HeardDownload()
            let session = session(heard)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(for: fixture, faults: "throttle:4MiB", run: UUID().uuidString)
            let task = underWay(session, url)
            let resumeData = try #require(try pause(task, heard))
            #expect(heard.waitForCompletion())
            #expect(heard.events == ["completed \(URLError.cancelled.rawValue)", "handed over a blob"])
            #expect(task.state == .completed)
            #expect((heard.lastError as? URLError)?.downloadTaskResumeData == resumeData)

            let resumed = session.downloadTask(withResumeData: resumeData)
            #expect(resumed.originalRequest?.url == url)
            resumed.resume()
            #expect(heard.waitForCompletion())
            #expect(heard.events.last == "completed nil")
            #expect(heard.events.contains { $0.hasPrefix("resumed at ") && $0 != "resumed at 0" })
            #expect(heard.finishedBytes == body(fixture))
            let ranges = server.requestLog.filter { $0.target.contains(url.query ?? "") }.map(\.range)
            #expect(ranges.count == 2 && ranges[0] == nil && ranges[1]?.hasPrefix("bytes=") == true, "\(ranges)")
        }

        /// A resume answered with an error page fails, and keeps the partial file the resume data
        /// vouches for: a later resume can still use it.
        @Test func anErrorPageOnAResumeKeepsThePartialFile() throws {
            let heard = HeardDownload()
            let session = session(heard)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(for: Fixture(name: "gone", size: 8 << 20), faults: "throttle:4MiB,status:404", run: UUID().uuidString)
            let task = underWay(session, url)
            let resumeData = try #require(try pause(task, heard))
            #expect(heard.waitForCompletion())
            let (stored, _) = try ResumeData.decode(resumeData)
            let tempFile = LabFolders.temporary.appendingPathComponent(try #require(stored.tempFileName))
            session.downloadTask(withResumeData: resumeData).resume()
            #expect(heard.waitForCompletion())
            #expect(heard.events.last?.hasPrefix("completed HTTP 404") == true, "\(heard.events)")
            #expect(!heard.events.contains { $0.hasPrefix("finished") }, "\(heard.events)")
            #expect(PartialFile.size(of: tempFile) >= stored.bytesReceived)
            try? FileManager.default.removeItem(at: tempFile)
        }

        /// Suspend keeps the bytes; resume asks for the rest with Range.
        @Test func suspendAndResumeContinueTheSameFile() throws {
            let fixture = Fixture(name: "suspended", size: 8 << 20)
            let heard = HeardDownload()
            let session = session(heard)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(for: fixture, faults: "throttle:4MiB", run: UUID().uuidString)
            let task = underWay(session, url)
            task.suspend()
            #expect(task.state == .suspended)
            Thread.sleep(forTimeInterval: 0.3)
            task.resume()
            #expect(heard.waitForCompletion())
            #expect(heard.events.last == "completed nil")
            #expect(heard.finishedBytes == body(fixture))
            let ranges = server.requestLog.filter { $0.target.contains(url.query ?? "") }.map(\.range)
            #expect(ranges.count == 2 && ranges[1]?.hasPrefix("bytes=") == true, "\(ranges)")
        }

        /// A Pause while a suspend is still stopping the transfer ends it as a Pause: the handler
        /// is called, once, with a blob.
        @Test func pauseWhileSuspendingStillHandsOver() throws {
            let heard = HeardDownload()
            let session = session(heard)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(for: Fixture(name: "both", size: 8 << 20), faults: "throttle:4MiB", run: UUID().uuidString)
            let task = underWay(session, url)
            task.suspend()
            let resumeData = try #require(try pause(task, heard))
            #expect(heard.events == ["completed \(URLError.cancelled.rawValue)", "handed over a blob"])
            // The blob is not resumed: the partial file it names goes with the test.
            let (stored, _) = try ResumeData.decode(resumeData)
            try? FileManager.default.removeItem(at: LabFolders.temporary.appendingPathComponent(try #require(stored.tempFileName)))
        }

        /// An app may invalidate its session as soon as its tasks are under way (`resume()`, then
        /// `finishTasksAndInvalidate()`): the running task still reaches its delegate to the end.
        @Test func invalidatingLetsTheRunningTasksFinish() throws {
            let fixture = Fixture(name: "invalidated", size: 4 << 20)
            let heard = HeardDownload()
            let session = session(heard)
            session.downloadTask(with: server.url(for: fixture, faults: "throttle:16MiB", run: UUID().uuidString)).resume()
            session.finishTasksAndInvalidate()
            #expect(heard.waitForCompletion())
            #expect(heard.events == ["finished 200", "completed nil"])
            #expect(heard.finishedBytes == body(fixture))
        }

        /// A task that has completed hands back nil, and a plain cancel of an unstarted task
        /// completes it cancelled and leaves no temporary file.
        @Test func stopsThatFindNothingToStop() throws {
            let heard = HeardDownload()
            let session = session(heard)
            defer { session.finishTasksAndInvalidate() }
            let url = server.url(for: Fixture(name: "small", size: 64 << 10), run: UUID().uuidString)
            let done = session.downloadTask(with: url)
            done.resume()
            #expect(heard.waitForCompletion())
            #expect(try pause(done, heard) == nil)

            let temporaryFiles = { Set((try? FileManager.default.contentsOfDirectory(
                atPath: LabFolders.temporary.path)) ?? []) }
            let before = temporaryFiles()
            session.downloadTask(with: url).cancel()
            #expect(heard.waitForCompletion())
            #expect(heard.events.last == "completed \(URLError.cancelled.rawValue)")
            #expect(temporaryFiles().isSubset(of: before))
        }
    }
}
#endif
