import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// Records every exchange of one run (through `URLConnection`, the inspected sessions and the
/// harness's own requests), so a lesson's code stays free of logging while the run still shows
/// the request line, `Range`, status and `Content-Range` that matter. The harness makes one per
/// process and hands it to what records into it.
public final class HTTPExchangeLog: Sendable {
    public enum Event: Sendable {
        case request(HTTPExchange)
        case redirect(from: HTTPExchange, to: String)
        case response(HTTPExchange)
        case failure(HTTPExchange)
        /// A fetch made through an API that shows neither request nor response.
        case unobserved(HTTPExchange)
    }

    public init() {}

    private struct State {
        var exchanges: [HTTPExchange] = []
        var observer: (@Sendable (Event) -> Void)?
        var limitWatcher: (@Sendable (HTTPExchange) -> Void)?
    }
    private let state = Mutex(State())

    public var exchanges: [HTTPExchange] { state.withLock { $0.exchanges } }

    /// Body bytes received over all exchanges, including bytes that arrived twice.
    public var bodyBytesReceived: Int64 { state.withLock { $0.exchanges.reduce(0) { $0 + $1.bodyBytes } } }

    public func observe(_ observer: @escaping @Sendable (Event) -> Void) {
        state.withLock { $0.observer = observer }
    }

    /// `watcher` sees each exchange again whenever a response or a chunk has arrived, on the
    /// thread that delivered it: `LessonProcess` ends the run there when a limit is passed.
    package func watchLimits(_ watcher: @escaping @Sendable (HTTPExchange) -> Void) {
        state.withLock { $0.limitWatcher = watcher }
    }

    func begin(_ request: URLRequest) -> Int {
        let exchange = HTTPExchange(
            method: request.httpMethod.map(RequestMethod.init(rawValue:)) ?? .get,
            url: request.url.map(ShownURL.redacted) ?? "",
            range: request.value(forHTTPHeaderField: "Range"),
            ifRange: request.value(forHTTPHeaderField: "If-Range"),
            ifNoneMatch: request.value(forHTTPHeaderField: "If-None-Match"),
            ifModifiedSince: request.value(forHTTPHeaderField: "If-Modified-Since")
        ).started(at: Self.now, headers: request.allHTTPHeaderFields)
        let (index, observer) = state.withLock { state in
            state.exchanges.append(exchange)
            return (state.exchanges.count - 1, state.observer)
        }
        ResidentPeak.sample()
        observer?(.request(exchange))
        return index
    }

    package func unobserved(url: URL, bodyBytes: Int64) {
        let exchange = HTTPExchange(method: .get, url: ShownURL.redacted(url), bodyBytes: bodyBytes)
        let observer = state.withLock { state in
            state.exchanges.append(exchange)
            return state.observer
        }
        observer?(.unobserved(exchange))
    }

    /// Exchanges another process recorded and told in its own story (lesson 09's app and
    /// transfer service): added to the record, and told to nobody again.
    package func adopt(_ exchanges: [HTTPExchange]) {
        state.withLock { $0.exchanges += exchanges }
    }

    func redirected(_ index: Int, by response: HTTPURLResponse, to newRequest: URLRequest) {
        let (hop, observer) = update(index) { $0.record(response) }
        observer?(.redirect(from: hop, to: newRequest.url.map(ShownURL.redacted) ?? ""))
        // The next hop is a new request on the same exchange record.
        update(index) { exchange in
            exchange = HTTPExchange(
                method: exchange.method, url: newRequest.url.map(ShownURL.redacted) ?? "",
                range: newRequest.value(forHTTPHeaderField: "Range"),
                ifRange: newRequest.value(forHTTPHeaderField: "If-Range"),
                ifNoneMatch: newRequest.value(forHTTPHeaderField: "If-None-Match"),
                ifModifiedSince: newRequest.value(forHTTPHeaderField: "If-Modified-Since")).started(at: Self.now,
                                                                                                    headers: newRequest.allHTTPHeaderFields)
        }
    }

    func received(_ index: Int, response: URLResponse) {
        let (exchange, observer) = update(index) { exchange in
            if let http = response as? HTTPURLResponse { exchange.record(http) }
            exchange.firstByteAt = exchange.firstByteAt ?? Self.now
        }
        ResidentPeak.sample()
        observer?(.response(exchange))
        state.withLock { $0.limitWatcher }?(exchange)
    }

    func received(_ index: Int, bodyBytes: Int) {
        // A download task's `response` can still be nil at its `didWriteData` (measured on
        // Foundation on Linux): its first body bytes are then the first sign of the answer.
        let (exchange, _) = update(index) { exchange in
            exchange.bodyBytes += Int64(bodyBytes)
            exchange.firstByteAt = exchange.firstByteAt ?? Self.now
        }
        if exchange.bodyBytes >> 20 != (exchange.bodyBytes - Int64(bodyBytes)) >> 20 { ResidentPeak.sample() }
        state.withLock { $0.limitWatcher }?(exchange)
    }

    /// `reason`: the failure in one line, as `describe(_:)` puts it.
    func failed(_ index: Int, reason: String) {
        let (exchange, observer) = update(index) { $0.error = reason }
        ResidentPeak.sample()
        observer?(.failure(exchange))
    }

    /// Seconds since 1970, the clock every process of a run shares.
    package static var now: Double { (Date().timeIntervalSince1970 * 1000).rounded() / 1000 }

    /// Every change is news of the exchange: its end is the last of them.
    @discardableResult
    private func update(_ index: Int, _ change: (inout HTTPExchange) -> Void) -> (HTTPExchange, (@Sendable (Event) -> Void)?) {
        let now = Self.now
        return state.withLock { state in
            change(&state.exchanges[index])
            state.exchanges[index].endedAt = now
            return (state.exchanges[index], state.observer)
        }
    }
}

extension HTTPExchange {
    fileprivate func started(at time: Double, headers: [String: String]?) -> HTTPExchange {
        var exchange = self
        (exchange.startedAt, exchange.endedAt) = (time, time)
        exchange.requestHeaders = HeaderField.sorted(headers ?? [:])
        return exchange
    }

    fileprivate mutating func record(_ response: HTTPURLResponse) {
        status = response.statusCode
        contentRange = response.value(forHTTPHeaderField: "Content-Range")
        contentLength = response.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
        etag = response.value(forHTTPHeaderField: "ETag")
        reprDigestSHA256 = response.reprDigestSHA256
        responseHeaders = HeaderField.sorted(Dictionary(response.allHeaderFields.compactMap { key, value in
            (key as? String).map { ($0, "\(value)") }
        }, uniquingKeysWith: { first, _ in first }))
    }
}


extension HTTPExchangeLog {
    /// One exchange's place in a log: what a delegate keeps to record the rest of the exchange.
    package struct Entry: Sendable {
        let log: HTTPExchangeLog
        let index: Int

        package func received(_ response: URLResponse) { log.received(index, response: response) }
        package func received(bodyBytes: Int) { log.received(index, bodyBytes: bodyBytes) }
        package func redirected(by response: HTTPURLResponse, to newRequest: URLRequest) {
            log.redirected(index, by: response, to: newRequest)
        }
        /// `reason`: the failure in one line, as `describe(_:)` puts it.
        package func failed(reason: String) { log.failed(index, reason: reason) }
    }

    /// Records `request` as the start of a new exchange.
    package func entry(for request: URLRequest) -> Entry { Entry(log: self, index: begin(request)) }
}
