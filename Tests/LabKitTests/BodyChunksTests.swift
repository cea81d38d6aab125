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

final class Flag: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .relaxed) }
    func set() { value.store(true, ordering: .relaxed) }
}

/// LabKit's `URLSession.bodyChunks(for:)`, and `bytes(for:)` (on Linux LabKit's too), against the
/// lab server over a real socket.
extension InProcessTransfers {
    @Suite(.serialized)
    final class BodyChunksTests {
        let server: LabServer

        init() throws { server = try LabServer.start() }
        deinit { server.stop() }

        private func expectedBytes(_ fixture: Fixture) -> Data {
            var data = Data(count: Int(fixture.size))
            data.withUnsafeMutableBytes { fixture.fill($0, from: 0) }
            return data
        }

        /// The server's log entry for `token`'s request, once its response has ended.
        private func loggedRequest(_ token: String) async throws -> LoggedRequest {
            for _ in 0..<500 {
                if let request = server.requestLog.last(where: { $0.target.contains("run=\(token)") }) { return request }
                try await Task.sleep(for: .milliseconds(20))
            }
            throw CancellationError()
        }

        @Test func bytesAndChunksGiveTheBodyExactly() async throws {
            let fixture = Fixture(name: "async-bytes", size: 3 << 20 + 12_345)
            let url = server.url(for: fixture)

            let (bytes, response) = try await URLSession.shared.bytes(from: url)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            var oneByOne = Data()
            for try await byte in bytes { oneByOne.append(byte) }
            #expect(oneByOne == expectedBytes(fixture))

            let (chunks, _) = try await URLSession.shared.bodyChunks(for: URLRequest(url: url))
            var pieces = 0
            var chunked = Data()
            for try await chunk in chunks {
                pieces += 1
                chunked.append(chunk)
            }
            #expect(chunked == expectedBytes(fixture))
            #expect(pieces > 1)
        }

        /// An error status is a response like any other: the body is the server's error page.
        @Test func anErrorStatusComesWithItsBody() async throws {
            let url = server.url(for: Fixture(name: "async-404", size: 1 << 20), faults: "status:404", run: UUID().uuidString)
            let (chunks, response) = try await URLSession.shared.bodyChunks(for: URLRequest(url: url))
            #expect((response as? HTTPURLResponse)?.statusCode == 404)
            var body = Data()
            for try await chunk in chunks { body.append(chunk) }
            #expect(Int64(body.count) == response.expectedContentLength)
        }

        /// A dropped connection: every byte sent before the drop arrives, then the error.
        @Test func aBrokenTransferEndsWithItsErrorAfterEveryByteBeforeIt() async throws {
            let fixture = Fixture(name: "async-drop", size: 4 << 20)
            let token = UUID().uuidString
            let (chunks, _) = try await URLSession.shared.bodyChunks(
                for: URLRequest(url: server.url(for: fixture, faults: "drop:40pct", run: token)))
            var received = Data()
            var failure: (any Error)?
            do {
                for try await chunk in chunks { received.append(chunk) }
            } catch {
                failure = error
            }
            #expect((failure as? URLError) != nil, "\(String(describing: failure))")
            let sent = try await loggedRequest(token).bodyBytesSent
            #expect(Int64(received.count) == sent)
            #expect(received == expectedBytes(fixture).prefix(received.count))
        }

        /// Backpressure: a reader that stops reading stops the sender after a bounded amount.
        /// Cancelling its Task stops the transfer: the reader still gets what had arrived, every
        /// byte of it in order, then CancellationError.
        @Test(.enabled(if: Platform.isLinux, "the bound is LabKit's BoundedOperationQueue feeding the delegate; how Apple's URLSession feeds a delegate queue is not public, so on a Mac it is unmeasured"))
        func aReaderThatStopsHoldsTheSenderBackAndCancellingEndsIt() async throws {
            let fixture = Fixture(name: "async-held", size: 256 << 20)
            let token = UUID().uuidString
            let (chunks, _) = try await URLSession.shared.bodyChunks(for: URLRequest(url: server.url(for: fixture, run: token)))
            let reader = Task { () -> (Data, (any Error)?) in
                var iterator = chunks.makeAsyncIterator()
                var received = (try? await iterator.next()) ?? Data()
                // A reader far behind: the sender must wait for it, not fill memory.
                try? await Task.sleep(for: .seconds(60))
                do {
                    while let chunk = try await iterator.next() { received.append(chunk) }
                } catch {
                    return (received, error)
                }
                return (received, nil)
            }
            try await Task.sleep(for: .seconds(1))
            reader.cancel()
            let (received, end) = await reader.value
            #expect(end is CancellationError, "\(String(describing: end))")
            #expect(received == expectedBytes(fixture).prefix(received.count))
            let sent = try await loggedRequest(token).bodyBytesSent
            // 16 chunks waiting for the reader, 64 in the delegate queue, and the sockets' buffers.
            #expect(sent < 24 << 20, "sent \(sent) bytes to a reader that took one chunk")
            #expect(Int64(received.count) <= sent)
            #expect(Int64(received.count) > sent - (1 << 20), "received \(received.count) of \(sent)")
        }

        /// On Linux every URLSession shares one work queue: a body nobody reads holds back every
        /// other transfer in the process, even from another server, until it is read or cancelled.
        /// (Another server: cancelling shuts down the busy connections to its own server, see
        /// `cancelAtOnce()`.)
        @Test(.enabled(if: Platform.isLinux, "Foundation on Linux runs every session's transfers on one work queue"))
        func anUnreadBodyHoldsBackOtherTransfersUntilItIsCancelled() async throws {
            let (unread, _) = try await URLSession.shared.bodyChunks(
                for: URLRequest(url: server.url(for: Fixture(name: "async-unread", size: 256 << 20), run: UUID().uuidString)))
            let otherServer = try LabServer.start()
            defer { otherServer.stop() }
            let other = Fixture(name: "async-other", size: 4 << 20)
            let otherURL = otherServer.url(for: other, run: UUID().uuidString)
            let finished = Flag()
            let reading = Task { () -> Data in
                let (chunks, _) = try await URLSession.shared.bodyChunks(for: URLRequest(url: otherURL))
                var body = Data()
                for try await chunk in chunks { body.append(chunk) }
                finished.set()
                return body
            }
            // 4 MiB takes milliseconds on loopback; here it waits for the first body's reader.
            try await Task.sleep(for: .seconds(4))
            let endedWhileUnread = finished.isSet
            #expect(!endedWhileUnread, "the other transfer ended while the first body sat unread")
            unread.cancel()
            let body = try await reading.value
            #expect(body == expectedBytes(other))
        }

        /// Dropping the sequence unread cancels its transfer.
        @Test func droppingTheBytesUnreadStopsTheTransfer() async throws {
            let fixture = Fixture(name: "async-dropped", size: 256 << 20)
            let token = UUID().uuidString
            do {
                let (_, response) = try await URLSession.shared.bodyChunks(for: URLRequest(url: server.url(for: fixture, run: token)))
                #expect(response.expectedContentLength == fixture.size)
            }
            let sent = try await loggedRequest(token).bodyBytesSent
            #expect(sent < 24 << 20, "sent \(sent) bytes for a body nobody read")
        }
    }
}
