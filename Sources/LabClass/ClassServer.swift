import Foundation
import LabVocabulary
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// The class server's HTTP side, on SwiftNIO like the lab's own server: students' submissions
/// in, the teacher's page out. Every connection is bounded: at most `maximumConnections` at
/// once (`maximumConnectionsPerClient` from one address), closed after `idleTimeout` without a
/// byte while no answer is being made, and after `connectionLifetime` whatever it
/// does, so slow or idle clients cannot hold the class's server.
public final class ClassServer: Sendable {
    public static let maximumConnections = 256
    /// One address may hold half of them: one client cannot lock the class out, and sixty
    /// students behind one address (a classroom's NAT), all submitting at once, fit with room to
    /// spare. A connection counts until the server has finished with it, which on a loaded
    /// machine is a while after the client has closed it and opened the next: at 64, 60 such
    /// students were refused 7 of 1,200 submissions in one CI run.
    public static let maximumConnectionsPerClient = 128
    public static let idleTimeout = TimeAmount.seconds(10)
    public static let connectionLifetime = TimeAmount.seconds(60)
    /// How long a refused body is still read, and dropped, before the connection closes.
    public static let lingerTime = TimeAmount.seconds(2)
    /// The bodies of all connections together, held while they arrive: 256 slow clients with a
    /// megabyte each must not take a quarter of a gigabyte. Beyond it a request gets 503, and
    /// `lab` keeps the submission to send again.
    public static let bodyBudget = 32 << 20

    private let bufferedBodies = Atomic<Int>(0)
    private let channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let routes: ClassRoutes
    private let openConnections = Atomic<Int>(0)
    private let connectionsByClient = Mutex<[String: Int]>([:])
    public let port: Int

    /// Binds `address`; throws `ClassListenError` when it cannot.
    public static func bind(_ address: SocketAddress, store: ClassStore) async throws(ClassListenError) -> ClassServer {
        let credentials: ClassCredentials
        do { credentials = try store.credentials() } catch { throw .cannotListen("cannot read the class: \(error)") }
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.backlog, value: 256)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
                .bind(to: address) { child in
                    child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                        try child.pipeline.syncOperations.addHandler(CloseWhenIdle())
                        try child.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                        try child.pipeline.syncOperations.addHandler(MalformedRequestAnswer())
                        return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: child)
                    }
                }
            return ClassServer(channel: channel, routes: ClassRoutes(store: store, credentials: credentials))
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw .portInUse("\(address.ipAddress ?? "the address"):\(address.port ?? 0) is in use by another program; stop it or pick another port")
        } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL {
            throw .badAddress("\(address.ipAddress ?? "that address") is not an address of this machine")
        } catch {
            throw .cannotListen("cannot listen on \(address): \(error)")
        }
    }

    private init(channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>, routes: ClassRoutes) {
        self.channel = channel
        self.routes = routes
        port = channel.channel.localAddress?.port ?? 0
    }

    /// Serves until the task is cancelled or the channel closes.
    public func serve() async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await channel.executeThenClose { connections in
                for try await connection in connections {
                    let client = connection.channel.remoteAddress?.ipAddress ?? "?"
                    let open = openConnections.add(1, ordering: .relaxed).newValue
                    let fromClient = connectionsByClient.withLock { counts in
                        counts[client, default: 0] += 1
                        return counts[client]!
                    }
                    guard open <= Self.maximumConnections, fromClient <= Self.maximumConnectionsPerClient else {
                        openConnections.subtract(1, ordering: .relaxed)
                        self.closed(from: client)
                        // Closed through executeThenClose: dropping an NIOAsyncChannel unused
                        // leaves its writer unfinished, which SwiftNIO treats as a fatal error.
                        group.addTask { try? await connection.executeThenClose { _, _ in } }
                        continue
                    }
                    let lifetime = connection.channel.eventLoop.scheduleTask(in: Self.connectionLifetime) {
                        connection.channel.close(promise: nil)
                    }
                    group.addTask {
                        defer {
                            lifetime.cancel()
                            self.openConnections.subtract(1, ordering: .relaxed)
                            self.closed(from: client)
                        }
                        try? await self.handle(connection)
                    }
                }
            }
        }
    }

    private func closed(from client: String) {
        connectionsByClient.withLock { counts in
            counts[client, default: 1] -= 1
            if counts[client] == 0 { counts[client] = nil }
        }
    }

    /// Stops listening; `serve()` returns once its connections have ended.
    public func close() async {
        try? await channel.channel.close()
    }

    /// The requests of one connection, one after another.
    private func handle(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async throws {
        let idle = try await connection.channel.pipeline.handler(type: CloseWhenIdle.self).get()
        try await connection.executeThenClose { inbound, outbound in
            var parts = inbound.makeAsyncIterator()
            while let part = try await parts.next() {
                guard case .head(let head) = part else { return }
                // The client waits for the answer, sending nothing: no idle time-out meanwhile.
                idle.answering.store(true, ordering: .relaxed)
                defer { idle.answering.store(false, ordering: .relaxed) }
                let response: ClassResponse
                if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > ClassRoutes.largestBody {
                    // Answered before the body: nobody waits for a megabyte that will be refused.
                    response = .tooLarge
                } else {
                    switch try await body(after: head, from: &parts) {
                    case .complete(let body): response = await routes.respond(to: head, body: body)
                    case .tooLarge: response = .tooLarge
                    case .overBudget: response = .busy
                    }
                }
                // A refused body may still be arriving: the connection ends rather than keep it.
                let refused = response.status == .payloadTooLarge || response.status == .serviceUnavailable
                try await write(response, to: outbound, keepAlive: head.isKeepAlive && !refused)
                if refused {
                    await linger(reading: &parts, of: connection.channel)
                    return
                }
                if !head.isKeepAlive { return }
            }
        }
    }

    /// A lingering close, as nginx makes one: closed while the client still sends, the socket
    /// would answer it with a reset, and the client could lose the answer it has not read yet.
    /// What arrives until the request's end is dropped, for `lingerTime` at most.
    private func linger(reading parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator,
                        of channel: any Channel) async {
        let deadline = channel.eventLoop.scheduleTask(in: Self.lingerTime) { channel.close(promise: nil) }
        defer { deadline.cancel() }
        while let part = try? await parts.next() {
            if case .end = part { return }
        }
    }

    private enum Body {
        case complete(ByteBuffer)
        case tooLarge
        case overBudget
    }

    /// The request's body, within the largest allowed and the server's budget for bodies.
    private func body(after head: HTTPRequestHead,
                      from parts: inout NIOAsyncChannelInboundStream<HTTPServerRequestPart>.AsyncIterator) async throws -> Body {
        var body = ByteBuffer()
        defer { bufferedBodies.subtract(body.readableBytes, ordering: .relaxed) }
        while let part = try await parts.next() {
            switch part {
            case .body(var chunk):
                guard body.readableBytes + chunk.readableBytes <= ClassRoutes.largestBody else { return .tooLarge }
                let buffered = bufferedBodies.add(chunk.readableBytes, ordering: .relaxed).newValue
                guard buffered <= Self.bodyBudget else {
                    bufferedBodies.subtract(chunk.readableBytes, ordering: .relaxed)
                    return .overBudget
                }
                body.writeBuffer(&chunk)
            case .end:
                return .complete(body)
            case .head:
                throw RequestInsideRequest()
            }
        }
        return .complete(body)
    }

    private func write(_ response: ClassResponse, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
                       keepAlive: Bool) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.utf8.count))
        headers.add(name: "Cache-Control", value: "no-store")
        if let location = response.location { headers.add(name: "Location", value: location) }
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        // The page's own script and style, nothing from elsewhere, and no framing by other pages.
        headers.add(name: "Content-Security-Policy",
                    value: "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "Connection", value: keepAlive ? "keep-alive" : "close")
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: response.status, headers: headers)))
        try await outbound.write(.body(.byteBuffer(ByteBuffer(string: response.body))))
        try await outbound.write(.end(nil))
    }
}

/// A request head before the last request's end: the connection is closed.
private struct RequestInsideRequest: Error {}

/// Closes a connection that has sent nothing for the idle timeout.
private final class CloseWhenIdle: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny
    /// Set while the server answers a request (draws a large class's page, say): the client is
    /// waiting then, not idle.
    let answering = Atomic(false)

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            guard !answering.load(ordering: .relaxed) else { return }
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}

/// Why `lab class serve` cannot start listening, by the exit status it gives.
public enum ClassListenError: Error, CustomStringConvertible {
    /// Exit 64: the address is not one to listen on.
    case badAddress(String)
    /// Exit 69: another program holds the port.
    case portInUse(String)
    case cannotListen(String)

    public var description: String {
        switch self {
        case .badAddress(let line), .portInUse(let line), .cannotListen(let line): line
        }
    }
}
