import Foundation
import LabFixtures
import LabVocabulary
import NIOCore
import NIOHTTP1

/// Answers the requests of one connection, one at a time (NIO's pipelining helper holds
/// back the next request until this one's response has ended).
final class RequestHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let core: ServerCore
    let uploadLimits: MultipartLimits
    var state = State.idle
    /// When the current request's head arrived, for its time to first byte.
    private var requestArrived = NIODeadline.now()
    /// The same moment in seconds since 1970, the clock a run's record uses.
    private var requestArrivedAt = 0.0
    /// The attempt key of the fixture GET this connection is answering, counted by the core
    /// until its response ends (`connections:`).
    var answeringKey: String?

    /// Where this connection is with its request. NIO's pipelining helper hands over one request
    /// at a time and holds back the next until this one's response has ended, so the states
    /// follow each other in this order; a request part that arrives in any other state ends the
    /// connection (see `channelRead`).
    enum State {
        /// Between requests.
        case idle
        /// A request whose body, if it has one, is read and ignored; it is answered at its end.
        case reading(HTTPRequestHead)
        /// A `POST /upload` whose body is parsed on the event loop as it arrives, so the socket is
        /// read no faster than it is hashed and nothing piles up in memory.
        case receivingUpload(HTTPRequestHead, MultipartParser)
        /// A `POST /upload` already answered with an error before its body ended: the rest of the
        /// body is read and dropped, up to `discardLimit` bytes, and the connection closes after it.
        case refusingUpload(discarded: Int64, answered: EventLoopFuture<Void>)
        /// A fixture's body going out.
        case sending(BodyStreamer)
    }

    /// A client that goes on sending after a refusal is cut off after this much.
    private static let discardLimit: Int64 = 64 << 20

    init(core: ServerCore, uploadLimits: MultipartLimits = MultipartLimits()) {
        self.core = core
        self.uploadLimits = uploadLimits
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (unwrapInboundIn(data), state) {
        case (.head(var head), .idle):
            head.uri = core.unsealed(head.uri)
            state = .reading(head)
            requestArrived = .now()
            requestArrivedAt = Date().timeIntervalSince1970
            if head.method == .POST, UploadEndpoint.matches(head.uri) {
                beginUpload(head, context: context)
            }
        case (.body, .reading):
            break  // only /upload reads request bodies; every other endpoint ignores them
        case (.body(let buffer), .receivingUpload(let head, var parser)):
            state = .idle  // the parser is mutated in place, not copied
            do {
                try parser.feed(buffer)
                state = .receivingUpload(head, parser)
            } catch {
                refuseUpload(RefusedUpload(error), request: head, context: context)
            }
        case (.body(let buffer), .refusingUpload(let discarded, let answered)):
            let total = discarded + Int64(buffer.readableBytes)
            state = .refusingUpload(discarded: total, answered: answered)
            if total > Self.discardLimit { context.close(promise: nil) }
        // Answered only once the whole request has been read, so its bytes cannot be mistaken
        // for the next request.
        case (.end, .reading(let head)):
            state = .idle
            respond(to: head, context: context)
        case (.end, .receivingUpload(let head, var parser)):
            state = .idle
            finishUpload(&parser, request: head, context: context)
        case (.end, .refusingUpload(_, let answered)):
            // The answer went out before the body ended; the connection closes after it.
            state = .idle
            answered.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        case (.head, _), (.body, _), (.end, _):
            // Out of order: NIO's HTTP handlers never deliver this. Guessing what the client
            // meant could splice two requests, so the connection ends instead.
            context.close(promise: nil)
        }
    }

    /// NIO's protocol error handler answers a malformed request (a bad request line, an oversized
    /// header, a bad chunk size) with 400 and `Connection: close`, and leaves the closing to the
    /// end of the pipeline, which is here. Any other error ends the connection too.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .sending(let streamer) = state { streamer.cancel() }
        stopAnswering()
        state = .idle
        context.fireChannelInactive()
    }

    // MARK: Routing

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        if UploadEndpoint.matches(request.uri) {
            sendText(.methodNotAllowed, "method \(request.method.rawValue) is not allowed on \(UploadEndpoint.path); use POST",
                     extraHeaders: [("Allow", "POST")], request: request, context: context)
            return
        }
        guard request.method == .GET || request.method == .HEAD else {
            sendText(.methodNotAllowed, "method \(request.method.rawValue) is not allowed; use GET or HEAD",
                     extraHeaders: [("Allow", "GET, HEAD")], request: request, context: context)
            return
        }
        let route: Route
        do {
            route = try Route(target: request.uri)
        } catch {
            sendText(.badRequest, "\(error)", request: request, context: context)
            return
        }
        switch route {
        case .index:
            sendText(.ok, HelpText.indexPage, request: request, context: context)
        case .notFound(let path):
            sendText(.notFound, "not found: \(path) (see / for the URLs this server knows)", request: request, context: context)
        case .checksum(let fixtureRequest):
            sendChecksum(fixtureRequest, request: request, context: context)
        case .fixture(let fixtureRequest):
            sendFixture(fixtureRequest, request: request, context: context)
        }
    }

    private func sendChecksum(_ fixtureRequest: FixtureRequest, request: HTTPRequestHead, context: ChannelHandlerContext) {
        let fixture = Fixture(name: fixtureRequest.name, size: fixtureRequest.size, content: fixtureRequest.content)
        core.digests.output(for: fixture, for: context.channel).assumeIsolated().whenComplete { result in
            switch result {
            case .success(let digest):
                // The two-space separator is sha256sum's, so `sha256sum -c` can check a download.
                self.sendText(.ok, DigestText.hex(digest) + "  " + fixture.name, request: request, context: context)
            case .failure(FixtureWorkError.busy):
                self.sendText(.serviceUnavailable, "busy hashing other fixtures; try again in a moment",
                              extraHeaders: [("Retry-After", "1")], request: request, context: context)
            case .failure:
                context.close(promise: nil) // the client left, or the server stops
            }
        }
    }

    // MARK: Fixtures

    private func sendFixture(_ fixtureRequest: FixtureRequest, request: HTTPRequestHead, context: ChannelHandlerContext) {
        let attempt = core.attempt(for: fixtureRequest, advancing: request.method == .GET)
        var faults = AttemptFaults(fixtureRequest.faults.faults(forAttempt: attempt), seed: Self.seed(request.uri, attempt: attempt))
        if core.stallsAreOver(for: fixtureRequest) { faults.stall = nil }
        guard let latency = faults.latency else {
            return answerFixture(fixtureRequest, attempt: attempt, faults: faults, request: request, context: context)
        }
        // The attempt is counted now, as the request arrived; its answer, whatever it is, waits.
        context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(latency)) {
            guard context.channel.isActive else { return }
            self.answerFixture(fixtureRequest, attempt: attempt, faults: faults, request: request, context: context)
        }
    }

    /// FNV-1a over the request's target and the attempt: the same URL's same attempt plays the
    /// same way again.
    private static func seed(_ target: String, attempt: Int) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in target.utf8 + Array(String(attempt).utf8) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return hash
    }

    private func answerFixture(_ fixtureRequest: FixtureRequest, attempt: Int, faults: AttemptFaults, request: HTTPRequestHead,
                               context: ChannelHandlerContext) {
        let fixture = Fixture(name: fixtureRequest.name, size: fixtureRequest.size,
                              generation: fixtureRequest.faults.generation(forAttempt: attempt),
                              content: fixtureRequest.content)
        switch FixturePlan.decide(FixturePlan.Ask(request.headers, hopsLeft: fixtureRequest.remainingHops), faults: faults, fixture: fixture) {
        case .redirect(let hopsLeft):
            let location = fixtureRequest.redirectLocation(attempt: attempt, hops: hopsLeft)
            sendText(.found, "redirecting to \(location)", extraHeaders: [("Location", location)],
                     attempt: attempt, request: request, context: context)
        case .status(let code):
            let status = HTTPResponseStatus(statusCode: code)
            sendText(status, ScriptedStatus.page(code: code, reason: status.reasonPhrase, attempt: attempt),
                     attempt: attempt, request: request, context: context)
        case .answer(let answer, let limit):
            guard startAnswering(fixtureRequest, limit: limit, request: request) else {
                return refuseBeyondLimit(limit ?? 0, attempt: attempt, request: request, context: context)
            }
            carryOut(answer, fixture: fixture, faults: faults, attempt: attempt, request: request, context: context)
        }
    }

    private func carryOut(_ answer: FixturePlan.Answer, fixture: Fixture, faults: AttemptFaults, attempt: Int,
                          request: HTTPRequestHead, context: ChannelHandlerContext) {
        switch answer {
        case .notModified(let compressed):
            // No body, and the fields that describe the file.
            let headers = HTTPHeaders(Self.describing(fixture, compressed: compressed, faults: faults))
            _ = writeHead(.notModified, headers: headers, attempt: attempt, request: request, context: context)
            endResponse(request: request, context: context)
        case .compressed:
            answerCompressed(fixture, faults: faults, attempt: attempt, request: request, context: context)
        case .identity(let selection):
            answerIdentity(fixture, selection, faults: faults, attempt: attempt, request: request, context: context)
        }
    }

    /// The file or a range of it. A small fixture is hashed before its first answer (a few
    /// slices, milliseconds), so `Repr-Digest` is on every response. A larger one is waited for
    /// only by a client that asks for the digest (RFC 9530 `Want-Repr-Digest`).
    private func answerIdentity(_ fixture: Fixture, _ selection: RangeSelection, faults: AttemptFaults, attempt: Int,
                                request: HTTPRequestHead, context: ChannelHandlerContext) {
        let digest = core.digests.output(for: fixture, for: context.channel)
        let wantsDigest = request.headers[canonicalForm: "Want-Repr-Digest"].contains { $0.lowercased().hasPrefix("sha-256") }
        guard fixture.size <= DigestWork.smallFixtureBytes || wantsDigest else {
            // Answered at once; the digest is computed meanwhile, while this client stays, and
            // later responses (a resume) carry it.
            return writeFixtureResponse(fixture, .identity(selection, digest: Fixture.cachedSHA256Digest(of: fixture)),
                                        faults: faults, attempt: attempt, request: request, context: context)
        }
        digest.assumeIsolated().whenComplete { result in
            // The client may have given up meanwhile.
            guard context.channel.isActive else { return }
            switch result {
            case .success(let digest):
                self.writeFixtureResponse(fixture, .identity(selection, digest: digest), faults: faults, attempt: attempt,
                                          request: request, context: context)
            case .failure(FixtureWorkError.busy):
                // Too many large digests under way: the answer goes out without one.
                self.writeFixtureResponse(fixture, .identity(selection, digest: nil), faults: faults, attempt: attempt,
                                          request: request, context: context)
            case .failure:
                return  // the server stops
            }
        }
    }

    /// The `gzip` fault, for a client that accepts gzip: the whole encoded body with 200 whatever
    /// the Range, as nginx's gzip filter answers. Its length is the encoding's, measured first.
    private func answerCompressed(_ fixture: Fixture, faults: AttemptFaults, attempt: Int, request: HTTPRequestHead,
                                  context: ChannelHandlerContext) {
        core.gzipLengths.output(for: fixture, for: context.channel).assumeIsolated().whenComplete { result in
            guard context.channel.isActive else { return }
            switch result {
            case .success(.success(let length)):
                self.writeFixtureResponse(fixture, .gzip(length: length), faults: faults, attempt: attempt,
                                          request: request, context: context)
            case .success(.failure(let failure)):
                self.sendText(.internalServerError, failure.description, attempt: attempt, request: request, context: context)
            case .failure(FixtureWorkError.busy):
                // Too many large compressions under way: this answer waits its turn. A 503 would
                // use up the script's attempt, and the next request would play the one after.
                context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(250)) {
                    guard context.channel.isActive else { return }
                    self.answerCompressed(fixture, faults: faults, attempt: attempt, request: request, context: context)
                }
            case .failure:
                return  // the client left, or the server stops
            }
        }
    }

    /// What a fixture response carries: the file itself (all of it or a range), or its gzip encoding.
    enum Representation {
        case identity(RangeSelection, digest: [UInt8]?)
        case gzip(length: Int64)
    }

    private func writeFixtureResponse(_ fixture: Fixture, _ representation: Representation, faults: AttemptFaults,
                                      attempt: Int, request: HTTPRequestHead, context: ChannelHandlerContext) {
        let isGET = request.method == .GET
        let status: HTTPResponseStatus
        let length: Int64
        // What the body is read from; nil when there is none to read (a 416, a compressed HEAD).
        let source: BodyStreamer.Source?
        switch representation {
        case .identity(.full, _):
            (status, length, source) = (.ok, fixture.size, .identity(fixture, firstOffset: 0))
        case .identity(.partial(let first, let last), _):
            (status, length, source) = (.partialContent, last - first + 1, .identity(fixture, firstOffset: first))
        case .identity(.unsatisfiable, _):
            (status, length, source) = (.rangeNotSatisfiable, 0, nil)
        case .gzip(let encodedLength):
            do {
                // Set up before the head goes out, so that a failure can still be a 500.
                (status, length, source) = (.ok, encodedLength, isGET ? .gzip(try GzipStream(fixture)) : nil)
            } catch {
                sendText(.internalServerError, "cannot start gzip: \(error)", attempt: attempt, request: request, context: context)
                return
            }
        }
        let hasBody = status != .rangeNotSatisfiable
        // A lying length only matters when a body follows; HEAD shows the honest headers.
        let lengthError = isGET && hasBody ? faults.lengthError ?? 0 : 0

        let headers = Self.fixtureHeaders(fixture, representation, faults: faults,
                                          announcedLength: max(0, length + lengthError), hasBody: hasBody)
        let logIndex = writeHead(status, headers: headers, attempt: attempt, request: request, context: context)
        guard isGET, let source else {
            endResponse(request: request, context: context)
            return
        }
        let streamer = BodyStreamer(
            context: context, source: source, length: length,
            plan: faults.bodyPlan(bodyLength: length),
            onBytesWritten: { [core] bytes in core.recordBodyBytes(bytes, at: logIndex) },
            onStall: { [core] in core.recordStall(at: logIndex) },
            onEnd: { ending in
                self.state = .idle
                switch ending {
                case .complete: self.endResponse(request: request, context: context)
                case .closeConnection: self.closeAfterPendingWrites(context: context)
                }
            }
        )
        state = .sending(streamer)
        streamer.start()
    }

    // MARK: Writing responses

    /// Short text answers: errors, redirects, scripted statuses, the index and checksums.
    /// The future completes when the answer has been written.
    @discardableResult
    func sendText(_ status: HTTPResponseStatus, _ line: String, contentType: String = "text/plain; charset=utf-8",
                          extraHeaders: [(String, String)] = [], attempt: Int = 0, requestBodyBytes: Int64 = 0,
                          uploadedFiles: [LoggedRequest.UploadedFile] = [],
                          request: HTTPRequestHead, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        let body = line.hasSuffix("\n") ? line : line + "\n"
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: "\(body.utf8.count)")
        headers.add(contentsOf: extraHeaders)
        let logIndex = writeHead(status, headers: headers, attempt: attempt, requestBodyBytes: requestBodyBytes,
                                 uploadedFiles: uploadedFiles, request: request, context: context)
        if request.method != .HEAD {
            core.recordBodyBytes(Int64(body.utf8.count), at: logIndex)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
        }
        return endResponse(request: request, context: context)
    }

    /// Logs the response before writing it, so a client that has read the response will
    /// always find it in `requestLog`.
    private func writeHead(_ status: HTTPResponseStatus, headers: HTTPHeaders, attempt: Int, requestBodyBytes: Int64 = 0,
                           uploadedFiles: [LoggedRequest.UploadedFile] = [],
                           request: HTTPRequestHead, context: ChannelHandlerContext) -> Int {
        var headers = headers
        if !request.isKeepAlive {
            headers.add(name: "Connection", value: "close")
        }
        let logIndex = core.record(LoggedRequest(
            method: RequestMethod(rawValue: request.method.rawValue), target: request.uri,
            range: request.headers.first(name: "Range"), ifRange: request.headers.first(name: "If-Range"),
            status: Int(status.code), bodyBytesSent: 0, attempt: attempt, requestBodyBytes: requestBodyBytes,
            uploadedFiles: uploadedFiles, firstByteSeconds: Double((NIODeadline.now() - requestArrived).nanoseconds) / 1e9,
            arrivedAt: requestArrivedAt, responseLength: headers.first(name: "Content-Length").flatMap { Int64($0) }
        ))
        let head = HTTPResponseHead(version: .http1_1, status: status, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        return logIndex
    }

    /// NIO drops writes still queued when a channel closes; an empty write completes only
    /// after everything before it, so closing then cannot cut off the head or the last chunk.
    private func closeAfterPendingWrites(context: ChannelHandlerContext) {
        stopAnswering()
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer()))))
            .assumeIsolated()
            .whenComplete { _ in context.close(promise: nil) }
    }

    @discardableResult
    private func endResponse(request: HTTPRequestHead, context: ChannelHandlerContext) -> EventLoopFuture<Void> {
        stopAnswering()
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !request.isKeepAlive {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
        return written
    }
}
