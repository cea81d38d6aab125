import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabKit
import LabPlatform
import LabServer
import LabVocabulary
import Synchronization
import Testing

/// Records every callback and the thread it ran on.
final class Recorder: URLConnectionDataDelegate, Sendable {
    struct Log {
        var events: [String] = []
        var body = Data()
        var threads: Set<Int> = []
        var queues: Set<ObjectIdentifier> = []
    }
    let log = Mutex(Log())
    let ended = DispatchSemaphore(value: 0)
    let cancelOnFirstChunk: Bool
    let cancelReturnedAfter = Mutex<TimeInterval?>(nil)

    init(cancelOnFirstChunk: Bool = false) { self.cancelOnFirstChunk = cancelOnFirstChunk }

    private func note(_ event: String) {
        log.withLock { log in
            log.events.append(event)
            log.threads.insert(currentThreadID())
            if let queue = OperationQueue.current { log.queues.insert(ObjectIdentifier(queue)) }
        }
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        note("response \((response as? HTTPURLResponse)?.statusCode ?? 0)")
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        let first = log.withLock { $0.body.isEmpty }
        note("data")
        log.withLock { $0.body.append(data) }
        if cancelOnFirstChunk && first {
            let start = Date()
            connection.cancel()
            cancelReturnedAfter.withLock { $0 = Date().timeIntervalSince(start) }
        }
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        note("finished")
        ended.signal()
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        note("failed \((error as? URLError)?.code.rawValue ?? 0)")
        ended.signal()
    }

    var events: [String] { log.withLock { $0.events } }
    var body: Data { log.withLock { $0.body } }
}

func currentThreadID() -> Int { Platform.currentThreadID }

extension InProcessTransfers {
    @Suite(.serialized)
    final class URLConnectionTests {
        let server: LabServer
        let fixture = Fixture(name: "connection", size: 2_000_003)

        init() throws { server = try LabServer.start() }
        deinit { server.stop() }

        var request: URLRequest { URLRequest(url: server.url(for: fixture)) }

        private func expectWholeFixture(_ recorder: Recorder) {
            let events = recorder.events
            #expect(events.first == "response 200")
            #expect(events.last == "finished")
            #expect(events.dropFirst().dropLast().allSatisfy { $0 == "data" })
            var expected = Data(count: Int(fixture.size))
            expected.withUnsafeMutableBytes { fixture.fill($0, from: 0) }
            #expect(recorder.body == expected)
        }

        @Test func callbacksArriveOnTheStartingThreadAndRunReturnsAtTheEnd() throws {
            let recorder = Recorder()
            let request = self.request
            let threadID = Mutex<Int>(0)
            let loopReturned = DispatchSemaphore(value: 0)
            Thread {
                threadID.withLock { $0 = currentThreadID() }
                _ = URLConnection(request: request, delegate: recorder)
                // As on Darwin: run() returns once the connection no longer needs the loop.
                RunLoop.current.run()
                loopReturned.signal()
            }.start()
            #expect(loopReturned.wait(timeout: .now() + 30) == .success)
            expectWholeFixture(recorder)
            #expect(recorder.log.withLock { $0.threads } == [threadID.withLock { $0 }])
        }

        @Test func aThreadThatNeverRunsItsRunLoopHearsNothing() throws {
            let recorder = Recorder()
            let request = self.request
            let connection = Mutex<URLConnection?>(nil)
            let started = DispatchSemaphore(value: 0)
            Thread {
                connection.withLock { $0 = URLConnection(request: request, delegate: recorder) }
                started.signal()
                Thread.sleep(forTimeInterval: 1.5)
            }.start()
            started.wait()
            #expect(recorder.ended.wait(timeout: .now() + 1) == .timedOut)
            #expect(recorder.events.isEmpty)
            connection.withLock { $0?.cancel() }
        }

        @Test func callbacksWaitWhileTheLoopRunsInAnotherMode() throws {
            let recorder = Recorder()
            let request = self.request
            let eventsDuringOtherMode = Mutex<[String]>(["not measured"])
            let done = DispatchSemaphore(value: 0)
            Thread {
                let connection = URLConnection(request: request, delegate: recorder, startImmediately: false)
                connection.schedule(in: .current, forMode: .default)
                connection.start()
                // Stands in for the main thread tracking a scroll view.
                let tracking = RunLoop.Mode("lab.tracking")
                let keepAlive = Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }
                RunLoop.current.add(keepAlive, forMode: tracking)
                _ = RunLoop.current.run(mode: tracking, before: Date(timeIntervalSinceNow: 1))
                eventsDuringOtherMode.withLock { $0 = recorder.events }
                RunLoop.current.run(mode: .default, until: { recorder.events.contains("finished") })
                done.signal()
            }.start()
            #expect(done.wait(timeout: .now() + 30) == .success)
            #expect(eventsDuringOtherMode.withLock { $0 }.isEmpty)
            expectWholeFixture(recorder)
        }

        @Test func delegateQueueReceivesTheCallbacksInOrder() throws {
            let recorder = Recorder()
            let queue = OperationQueue()
            let connection = URLConnection(request: request, delegate: recorder, startImmediately: false)
            connection.setDelegateQueue(queue)
            connection.start()
            #expect(recorder.ended.wait(timeout: .now() + 30) == .success)
            expectWholeFixture(recorder)
            #expect(recorder.log.withLock { $0.queues } == [ObjectIdentifier(queue)])
        }

        @Test func cancelReturnsAtOnceAndSilencesTheDelegate() throws {
            let recorder = Recorder(cancelOnFirstChunk: true)
            let big = Fixture(name: "cancel", size: 256 << 20)
            let request = URLRequest(url: server.url(for: big))
            let loopReturned = DispatchSemaphore(value: 0)
            Thread {
                _ = URLConnection(request: request, delegate: recorder)
                RunLoop.current.run()
                loopReturned.signal()
            }.start()
            #expect(loopReturned.wait(timeout: .now() + 30) == .success)
            Thread.sleep(forTimeInterval: 0.5)
            #expect(recorder.events == ["response 200", "data"])
            let cancelTook = try #require(recorder.cancelReturnedAfter.withLock { $0 })
            #expect(cancelTook < 0.1)
        }

        @Test func refusedConnectionFails() throws {
            let recorder = Recorder()
            let connection = URLConnection(
                request: URLRequest(url: URL(string: "http://127.0.0.1:1/nothing")!), delegate: recorder, startImmediately: false)
            connection.setDelegateQueue(OperationQueue())
            connection.start()
            #expect(recorder.ended.wait(timeout: .now() + 30) == .success)
            #expect(recorder.events == ["failed \(URLError.Code.cannotConnectToHost.rawValue)"])
        }

        @Test func synchronousHEADReportsTheLength() throws {
            var head = request
            head.httpMethod = "HEAD"
            let log = HTTPExchangeLog()
            URLConnection.recordExchanges(in: log)
            let (response, data) = try URLConnection.sendSynchronousRequest(head)
            #expect(response.expectedContentLength == fixture.size)
            #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "ETag") == fixture.etag)
            #expect(data.isEmpty)
            let logged = try #require(log.exchanges.last { $0.method == .head })
            #expect(logged.status == 200)
            #expect(logged.reprDigestSHA256 == fixture.sha256Hex())
        }
    }
}
