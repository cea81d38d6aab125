import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabPlatform
import LabServer
import Synchronization
import TestServers
import Testing

/// What Foundation on Linux does with a URL cache, against the lab server, so that what the lab
/// teaches about caching stands on what this system does. Apple documents the other behaviour: a
/// session proposes a cacheable response to `urlSession(_:dataTask:willCacheResponse:
/// completionHandler:)` and stores what it is handed back ("Accessing cached data").
struct FoundationCacheFactsTests {
    /// Counts `willCacheResponse`, and collects the body.
    final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        let asked = Atomic(0)
        let body = Mutex(Data())
        let done = DispatchSemaphore(value: 0)

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            body.withLock { $0.append(data) }
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
            asked.add(1, ordering: .relaxed)
            completionHandler(proposedResponse)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) { done.signal() }

        func fetch(_ url: URL, on session: URLSession) -> Data {
            body.withLock { $0 = Data() }
            session.dataTask(with: url).resume()
            _ = done.wait(timeout: .now() + 30)
            return body.withLock { $0 }
        }
    }

    @Test(.enabled(if: Platform.isLinux, "a fact of Foundation on Linux"))
    func linuxNeverStoresAResponseButAnswersFromOneStoredByHand() throws {
        try withLabServer { server in
            // A cache in memory only: nothing is written for it.
            let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: nil)
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = cache
            let delegate = Delegate()
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            let fixture = Fixture(name: "cacheable", size: 64 << 10)
            // Fresh for an hour, then changed on the server: a cache that stored the first would
            // answer the second with the old bytes.
            let url = server.url(for: fixture, faults: "cache-control:max-age=3600,change", run: UUID().uuidString)
            let first = delegate.fetch(url, on: session)
            let second = delegate.fetch(url, on: session)
            #expect(first.count == fixture.size && second.count == fixture.size)
            #expect(first != second, "the second request went to the server, which had changed the file")
            #expect(delegate.asked.load(ordering: .relaxed) == 0, "willCacheResponse is never asked")
            #expect(cache.cachedResponse(for: URLRequest(url: url)) == nil && cache.currentMemoryUsage == 0)

            // Stored by hand, a response is what the next request gets, without asking the server.
            let stored = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=3600"])!
            cache.storeCachedResponse(CachedURLResponse(response: stored, data: Data("stored by hand".utf8)), for: URLRequest(url: url))
            #expect(delegate.fetch(url, on: session) == Data("stored by hand".utf8))
        }
    }
}
