import NIOCore
import NIOHTTP1

/// A request HTTP/1.1 cannot read (a garbage request line, a Content-Length that is negative or
/// given twice, a head over NIO's 80 KB) gets what every refusal of the class server gets: a
/// status and one line of text saying what is wrong, then the connection closes. NIO's own
/// error handler answers an empty 400.
final class MalformedRequestAnswer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    /// A response has begun and not ended: a second head would break it, so the connection only closes.
    private var answering = false

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        if !answering {
            let line = Self.line(for: error) + "\n"
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
            headers.add(name: "Content-Length", value: String(line.utf8.count))
            headers.add(name: "Connection", value: "close")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .badRequest, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: line)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        } else {
            context.close(promise: nil)
        }
        context.fireErrorCaught(error)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head: answering = true
        case .end: answering = false
        case .body: break
        }
        context.write(data, promise: promise)
    }

    static func line(for error: HTTPParserError) -> String {
        switch error {
        case .headerOverflow: "the request's head is longer than 80 KB"
        case .invalidContentLength, .unexpectedContentLength: "the request's Content-Length is not one number of bytes"
        case .invalidURL: "the request's target is not a URL path"
        default: "not an HTTP/1.1 request this server can read (\(error))"
        }
    }
}
