import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// LabKit's half of the platform seam: Apple's Foundation API that Foundation on Linux lacks. Each
// fill-in carries Apple's names and is compiled on Linux only, so on Apple's systems the lessons'
// same code runs Apple's own:
// - `URLSession.downloadTask(withResumeData:)` and `cancel(byProducingResumeData:)` that work, and
//   `URLError.downloadTaskResumeData`: ResumableDownloadTask.swift, reached through the typealias
//   below;
// - `URLSession.bytes(for:)` and `URLSession.AsyncBytes`: BodyChunks.swift;
// - `Stream.getBoundStreams(withBufferSize:inputStream:outputStream:)`: BoundStreams.swift;
// - `URLSessionConfiguration.background(withIdentifier:)` and `URLError.backgroundTaskCancelledReason`:
//   below. (Lesson 09's sessions are the lab's `LabURLSession`s on every system:
//   Run/LabURLSession.swift, with LabPhone behind them.)
// What the operating system spells differently (memory, threads, sockets) is LabPlatform's.

/// Where a run's URL cache and cookies go: folders of the run's own, so that nothing a server
/// sends is kept outside the lab's folders or sent to another server in a later run.
package struct FoundationStores: Sendable {
    package let cache: URL
    package let cookies: URL

    package init(cache: URL, cookies: URL) {
        self.cache = cache
        self.cookies = cookies
    }
}

#if canImport(FoundationNetworking)
/// Linux: swift-corelibs-foundation keeps `URLCache.shared` under the XDG cache folder
/// (`org.swift.foundation.URLCache/<program>`) and `HTTPCookieStorage.shared` under the XDG data
/// folder (`<program's folder>/.cookies.shared`, with every cookie that has an expiry date), and
/// makes both folders as soon as a configuration is made (URLCache.swift, HTTPCookieStorage.swift,
/// URLSessionConfiguration.swift). Read from the environment each time: set before the first
/// session, they put both in `stores`. Without it they are in the home folder, and a cookie set by
/// one server in one run goes to any server of that domain in the next.
package func keepFoundationStores(in stores: FoundationStores) {
    setenv("XDG_CACHE_HOME", stores.cache.path, 1)
    setenv("XDG_DATA_HOME", stores.cookies.path, 1)
}

/// The folder `URLCache.shared` writes its entries into, inside `stores`: Foundation's own name
/// for it, and the program's (URLCache.swift: `org.swift.foundation.URLCache/<processName>`).
package func urlCacheFolder(in stores: FoundationStores) -> URL {
    stores.cache.appendingPathComponent("org.swift.foundation.URLCache", isDirectory: true)
}

/// Linux: LabKit's URLSession, whose download tasks keep the resume data contract.
typealias SessionWithResumeData = ResumableDownloadSession

/// LabKit's download sessions tell `log` when they are made and when they are invalidated.
package func tellDownloadSessionLifecycle(to log: @escaping @Sendable (String) -> Void) {
    ResumableDownloadSession.tellLifecycle(to: log)
}

/// `bytes(for:)` in a session with `configuration`, seen by the inspector: LabKit's takes a
/// delegate, which `inspect` wraps, so the exchange is recorded as it happens (`log` is not needed).
func inspectedBytes(for request: URLRequest, configuration: URLSessionConfiguration, log: HTTPExchangeLog,
                    inspect: (any URLSessionDataDelegate) -> any URLSessionDataDelegate) async throws
    -> (URLSession.AsyncBytes, URLResponse) {
    let (chunks, response) = try await BodyChunks.start(request, configuration: configuration, wrap: inspect)
    return (URLSession.AsyncBytes(chunks: chunks), response)
}
extension URLSessionConfiguration {
    /// Apple's `background(withIdentifier:)`, which Foundation on Linux marks unavailable: a
    /// configuration that names its session. `run.makeSession` gives such a configuration the
    /// lab's background session.
    public static func background(withIdentifier identifier: String) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.identifier = identifier
        return configuration
    }
}

/// The `userInfo` key of a failed download task's resume data.
package let downloadTaskResumeDataKey = URLSessionDownloadTaskResumeData

extension URLError {
    /// Apple's reasons a background task was cancelled (`NSURLErrorBackgroundTaskCancelledReasonKey`).
    public enum BackgroundTaskCancelledReason: Int, Sendable {
        case userForceQuitApplication = 0
        case backgroundUpdatesDisabled = 1
        case insufficientSystemResources = 2
    }

    /// Apple's: why the system cancelled a background task, when it did.
    public var backgroundTaskCancelledReason: BackgroundTaskCancelledReason? {
        (userInfo[NSURLErrorBackgroundTaskCancelledReasonKey] as? Int).flatMap(BackgroundTaskCancelledReason.init(rawValue:))
    }
}
#else
/// Apple's systems: a command-line program's cookies and URL cache are its own, in the user's
/// Library (Apple's `httpCookieStorage` documentation: "each app has its own cookie storage").
/// The run's cache goes into `stores` (`URLCache(memoryCapacity:diskCapacity:directory:)`), and
/// no cookie is accepted, so none outlives the run. Read against Apple's documentation; not run
/// on a Mac.
package func keepFoundationStores(in stores: FoundationStores) {
    URLCache.shared = URLCache(memoryCapacity: 4 << 20, diskCapacity: 20 << 20, directory: urlCacheFolder(in: stores))
    HTTPCookieStorage.shared.cookieAcceptPolicy = .never
}

/// The folder `keepFoundationStores` gives `URLCache.shared`, inside `stores`.
package func urlCacheFolder(in stores: FoundationStores) -> URL {
    stores.cache.appendingPathComponent("URLCache", isDirectory: true)
}

/// Apple's systems: URLSession itself.
typealias SessionWithResumeData = URLSession

/// The `userInfo` key of a failed download task's resume data: Apple's name for it.
package let downloadTaskResumeDataKey = NSURLSessionDownloadTaskResumeData

/// Apple's sessions tell nobody: the story shows no session lines there.
package func tellDownloadSessionLifecycle(to log: @escaping @Sendable (String) -> Void) {}

/// `bytes(for:)` in a session with `configuration`, seen by the inspector: Apple's tells no
/// delegate of its response or its body ("Delegate will not be called for response and data
/// delivery"), so the exchange goes into `log` when the call returns, without its body's bytes
/// (`inspect` is not needed).
func inspectedBytes(for request: URLRequest, configuration: URLSessionConfiguration, log: HTTPExchangeLog,
                    inspect: (any URLSessionDataDelegate) -> any URLSessionDataDelegate) async throws
    -> (URLSession.AsyncBytes, URLResponse) {
    let exchange = log.entry(for: request)
    let session = URLSession(configuration: configuration)
    // Its task runs on once the session is invalidated; the session then lets go of itself.
    defer { session.finishTasksAndInvalidate() }
    do {
        let (bytes, response) = try await session.bytes(for: request)
        exchange.received(response)
        return (bytes, response)
    } catch {
        exchange.failed(reason: describe(error))
        throw error
    }
}
#endif
