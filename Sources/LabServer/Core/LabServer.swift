import Foundation
import LabFixtures
import LabVocabulary
import NIOCore
import NIOHTTP1
import NIOPosix

/// The lab's local HTTP/1.1 server: serves fixtures, honours Range requests and misbehaves
/// on purpose when a URL carries a fault script.
///
/// Start it with `start()` from plain code or `startAsync()` from async code, and always
/// finish with `stop()` / `stopAsync()`. The blocking pair must not be called on one of the
/// server's own event-loop threads (it would wait for itself).
public final class LabServer: Sendable {
    public let host: String
    /// The real port, also when 0 asked the system to pick a free one.
    public let port: Int

    private let core: ServerCore
    private let group: MultiThreadedEventLoopGroup
    private let listener: Channel

    private init(host: String, listener: Channel, group: MultiThreadedEventLoopGroup, core: ServerCore) {
        self.host = host
        self.port = listener.localAddress?.port ?? 0
        self.listener = listener
        self.group = group
        self.core = core
    }

    // MARK: Starting and stopping

    /// Binds and starts serving before it returns. Throws a one-line `LabError`
    /// (e.g. when the port is in use).
    public static func start(host: String = "127.0.0.1", port: Int = 0) throws -> LabServer {
        try validate(port: port)
        let (group, core) = (makeEventLoopGroup(), ServerCore())
        do {
            let listener = try bootstrap(group: group, core: core).bind(host: host, port: port).wait()
            return LabServer(host: host, listener: listener, group: group, core: core)
        } catch {
            core.digests.stop()
            core.gzipLengths.stop()
            try? group.syncShutdownGracefully()
            throw listenError(host: host, port: port, cause: error)
        }
    }

    /// `start` for async code, where NIO's blocking `wait()` is not allowed.
    public static func startAsync(host: String = "127.0.0.1", port: Int = 0) async throws -> LabServer {
        try validate(port: port)
        let (group, core) = (makeEventLoopGroup(), ServerCore())
        do {
            let listener = try await bootstrap(group: group, core: core).bind(host: host, port: port).get()
            return LabServer(host: host, listener: listener, group: group, core: core)
        } catch {
            await core.digests.stop()
            await core.gzipLengths.stop()
            try? await group.shutdownGracefully()
            throw listenError(host: host, port: port, cause: error)
        }
    }

    /// Closes the listener and every open connection (stalled ones included) and ends the
    /// server's threads. Safe to call more than once.
    public func stop() {
        guard core.beginStopping() else { return }
        try? listener.close().wait()
        // At most one slice of digest work is under way per thread, so this returns promptly.
        core.digests.stop()
        core.gzipLengths.stop()
        // Shutting the loops down closes the connections still registered on them.
        try? group.syncShutdownGracefully()
    }

    /// `stop` for async code.
    public func stopAsync() async {
        guard core.beginStopping() else { return }
        try? await listener.close().get()
        await core.digests.stop()
        await core.gzipLengths.stop()
        try? await group.shutdownGracefully()
    }

    // MARK: URLs and observations

    /// `http://127.0.0.1:PORT`
    public var baseURL: URL {
        let hostInURL = host.contains(":") ? "[\(host)]" : host
        return URL(string: "http://\(hostInURL):\(port)")!
    }

    /// The URL that serves `fixture`. Its generation is not part of the URL: new generations
    /// are produced by a `change` fault.
    public func url(for fixture: Fixture, faults: String? = nil, run: String? = nil) -> URL {
        var text = "\(baseURL.absoluteString)/fixtures/\(fixture.name)?size=\(fixture.size)"
        if fixture.content != .binary {
            text += "&content=\(fixture.content)"
        }
        if let faults {
            text += "&faults=" + Self.queryEscaped(faults)
        }
        if let run {
            text += "&run=" + Self.queryEscaped(run)
        }
        return URL(string: text)!
    }

    /// The URL of `fixture` under `faults`, with neither in it: the server keeps them under a
    /// key, and the URL is `/sealed/<key>/<name>`. A graded program cannot read its fault plan
    /// from its URL and dodge it; the request log shows the target it stands for. A redirect
    /// fault's `Location` is unsealed.
    public func sealedURL(for fixture: Fixture, faults: String? = nil, run: String? = nil) -> URL {
        let target = url(for: fixture, faults: faults, run: run).absoluteString.dropFirst(baseURL.absoluteString.count)
        return URL(string: "\(baseURL.absoluteString)/sealed/\(core.seal(String(target)))/\(fixture.name)")!
    }

    /// After a run was killed at its stall: the later attempts of `token` play no `stall`, so the
    /// rerun is not stopped where the killed run was, however many attempts the killed run made.
    /// Every other fault of the script plays as written (a `change` after the kill still comes).
    public func endStalls(run token: String) {
        core.endStalls(run: token)
    }

    /// Digest computations under way (see `DigestWork`).
    var digestComputationsUnderWay: Int { core.digests.computationsUnderWay }

    /// The requests answered so far, oldest first: the newest 10,000 at most, with long targets
    /// and headers cut (see `BoundedRequestLog`), so a server that runs for days stays small.
    public var requestLog: [LoggedRequest] {
        core.requestLog
    }

    // MARK: Setup details

    private static func makeEventLoopGroup() -> MultiThreadedEventLoopGroup {
        // Two threads: a stalled or throttled connection never holds up the others, and
        // the lab's machines have two cores.
        MultiThreadedEventLoopGroup(numberOfThreads: 2)
    }

    private static func bootstrap(group: MultiThreadedEventLoopGroup, core: ServerCore) -> ServerBootstrap {
        ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 256)
            // Lets `lab serve` restart on the same port right after a stop.
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            // A socket is writable again only when less than this is queued unsent, so the
            // server never runs megabytes ahead of its client: the request log's body bytes are
            // bytes on their way, and a client that stops reading stops the sending quickly.
            .childChannelOption(.tcpOption(.init(rawValue: TCP_NOTSENT_LOWAT)), value: 128 << 10)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(RequestHandler(core: core))
                }
            }
    }

    private static func validate(port: Int) throws {
        guard (0...65535).contains(port) else {
            throw LabError("bad port \(port): expected 0 to 65535")
        }
    }

    private static func listenError(host: String, port: Int, cause: Error) -> LabError {
        let reason: String
        if let ioError = cause as? IOError {
            reason = String(cString: strerror(ioError.errnoCode)).lowercased()
        } else if cause is SocketAddressError.UnknownHost || cause is SocketAddressError {
            reason = "unknown host"
        } else {
            reason = "\(cause)".split(whereSeparator: \.isNewline).joined(separator: " ")
        }
        return LabError("cannot listen on \(host):\(port): \(reason)")
    }

    /// Fault scripts keep ":", "+" and "," readable in the URL; the server reads "+" literally.
    private static func queryEscaped(_ text: String) -> String {
        PercentEncoding.encoded(text, keeping: "-._~:+,")
    }
}
