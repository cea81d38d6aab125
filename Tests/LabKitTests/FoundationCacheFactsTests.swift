import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabPlatform
import LabServer
import Synchronization
import TestFolders
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

    /// With a response in the cache, Foundation on Linux reads only its freshness: a fresh one is
    /// the answer whatever the request's policy says, a stale one is fetched again whole (never
    /// revalidated with If-None-Match), and a policy that forbids loading loads all the same.
    @Test(.enabled(if: Platform.isLinux, "a fact of Foundation on Linux"), arguments: [
        // (the stored response's Cache-Control, the request's policy, answered from the cache)
        ("max-age=3600", URLRequest.CachePolicy.useProtocolCachePolicy, true),
        ("max-age=3600", .reloadIgnoringLocalCacheData, true),
        ("max-age=3600", .reloadRevalidatingCacheData, true),
        ("no-cache", .useProtocolCachePolicy, false),
        ("max-age=0", .useProtocolCachePolicy, false),
        ("max-age=0", .returnCacheDataElseLoad, false),
        ("no-cache", .returnCacheDataDontLoad, false),
    ])
    func linuxReadsOnlyAStoredResponsesFreshness(cacheControl: String, policy: URLRequest.CachePolicy, fromTheCache: Bool) throws {
        try withLabServer { server in
            let fixture = Fixture(name: "stored", size: 1000)
            let url = server.url(for: fixture, run: UUID().uuidString)
            let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
            let stored = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                         headerFields: ["ETag": fixture.etag, "Cache-Control": cacheControl])!
            cache.storeCachedResponse(CachedURLResponse(response: stored, data: Data("stored by hand".utf8)), for: URLRequest(url: url))
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = cache
            let delegate = Delegate()
            let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
            defer { session.finishTasksAndInvalidate() }
            var request = URLRequest(url: url)
            request.cachePolicy = policy
            delegate.body.withLock { $0 = Data() }
            session.dataTask(with: request).resume()
            _ = delegate.done.wait(timeout: .now() + 30)
            let asked = server.requestLog.filter { $0.target.contains(fixture.name) }
            if fromTheCache {
                #expect(delegate.body.withLock { $0 } == Data("stored by hand".utf8) && asked.isEmpty)
            } else {
                // Fetched whole: the stored ETag would have made a revalidation a 304.
                #expect(asked.map(\.status) == [200] && delegate.body.withLock { $0 }.count == fixture.size)
            }
        }
    }

    /// Apple's backup attribute has nothing to attach to on Linux: setting it is no error, and it
    /// reads back nil.
    @Test(.enabled(if: Platform.isLinux, "a fact of Foundation on Linux"))
    func linuxKeepsNoBackupAttribute() throws {
        var file = try TestFolders.scratch("backup").appendingPathComponent("kept.bin")
        try Data([1, 2, 3]).write(to: file)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        try file.setResourceValues(values)
        #expect(try file.resourceValues(forKeys: [.isExcludedFromBackupKey]).isExcludedFromBackup == nil)
    }
}
