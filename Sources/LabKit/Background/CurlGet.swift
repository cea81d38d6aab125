import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One GET through libcurl, for the transfer service's downloads. It runs on the calling thread
/// and hands the body over as it arrives: a slow receiver slows the sender through TCP's window,
/// so the service's memory stays flat whatever the disk and whatever the sender.
///
/// Why not URLSession, as everywhere else: on Linux, Foundation makes a timer for every 16 KiB
/// chunk, and the cancelled ones are freed only when libcurl's read loop gives its queue back,
/// which it does only once the socket is empty. A sender faster than the disk keeps it full, and
/// the timers pile up (docs/architecture.md, "The transfer service's memory"). Apple's own
/// service is not URLSession either.
///
/// The contract:
/// - The request is a GET with the request's header fields, as they are.
/// - Redirects are followed, up to `maximumRedirects` (URLSession's limit), each recorded in the
///   exchange's log entry with the same header fields; one more fails with
///   `.httpTooManyRedirects`.
/// - `didReceive(response)` is called once, with the final response, before its body; false
///   stops the exchange.
/// - `didReceive(body)` gets the body's pieces in order; false stops the exchange.
/// - `isStopped` is asked at least once a second, and before each piece; true stops the
///   exchange, and no piece is handed over after it.
/// - Nothing received for `idleSeconds` (or no connection within it) fails with `.timedOut`, as
///   URLSession's `timeoutIntervalForRequest`, a second late at most.
/// - A response whose header passes 256 KiB fails with `.badServerResponse`.
/// - It returns nil when the body ended as announced, `URLError(.cancelled)` when it was stopped,
///   or the `URLError` that URLSession gives for the same failure.
struct CurlGet {
    static let maximumRedirects = 16
    let idleSeconds: Double
    let log: HTTPExchangeLog

    func run(_ request: URLRequest, isStopped: @escaping () -> Bool,
             didReceive response: @escaping (HTTPURLResponse) -> Bool,
             didReceiveBody body: @escaping (UnsafeRawBufferPointer) -> Bool) -> URLError? {
        _ = Self.initialized
        let entry = log.entry(for: request)
        var request = request
        for _ in 0...Self.maximumRedirects {
            let hop = Hop(url: request.url!, entry: entry, idleSeconds: idleSeconds, isStopped: isStopped,
                          didReceive: response, didReceiveBody: body)
            let code = perform(request, hop)
            if let refusal = hop.refusal {
                entry.failed(reason: describe(refusal))
                return refusal
            }
            if hop.wasIdle {
                let error = URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: hop.url])
                entry.failed(reason: describe(error))
                return error
            }
            if hop.wasStopped || code == CURLE_ABORTED_BY_CALLBACK {
                entry.failed(reason: describe(URLError(.cancelled)))
                return URLError(.cancelled)
            }
            if let error = Self.urlError(for: code, saying: hop.curlMessage, url: hop.url) {
                entry.failed(reason: describe(error))
                return error
            }
            guard let redirect = hop.redirect else { return nil }
            request.url = redirect.target
            entry.redirected(by: redirect.response, to: request)
        }
        let error = URLError(.httpTooManyRedirects)
        entry.failed(reason: describe(error))
        return error
    }

    private func perform(_ request: URLRequest, _ hop: Hop) -> CURLcode {
        guard let handle = curl_easy_init() else { return CURLE_OUT_OF_MEMORY }
        defer { curl_easy_cleanup(handle) }
        var fields: UnsafeMutablePointer<curl_slist>?
        for (name, value) in request.allHTTPHeaderFields ?? [:] { fields = curl_slist_append(fields, "\(name): \(value)") }
        defer { curl_slist_free_all(fields) }
        let context = Unmanaged.passRetained(hop)
        defer { context.release() }
        let idleMilliseconds = max(1, Int(idleSeconds * 1000))
        let options: [CURLcode] = [
            lab_curl_set_string(handle, CURLOPT_URL, request.url!.absoluteString),
            lab_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            lab_curl_set_pointer(handle, CURLOPT_HTTPHEADER, fields),
            // URLSession on Linux decodes what the server compressed, whatever was asked for.
            lab_curl_set_string(handle, CURLOPT_ACCEPT_ENCODING, ""),
            // Threads, not signals: the service runs several transfers at once.
            lab_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
            lab_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, idleMilliseconds),
            lab_curl_set_data_function(handle, CURLOPT_HEADERFUNCTION, Hop.receiveHeaderLine),
            lab_curl_set_pointer(handle, CURLOPT_HEADERDATA, context.toOpaque()),
            lab_curl_set_data_function(handle, CURLOPT_WRITEFUNCTION, Hop.receiveBody),
            lab_curl_set_pointer(handle, CURLOPT_WRITEDATA, context.toOpaque()),
            lab_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, hop.errorBuffer),
            lab_curl_set_long(handle, CURLOPT_NOPROGRESS, 0),
            lab_curl_set_progress_function(handle, Hop.askWhetherStopped),
            lab_curl_set_pointer(handle, CURLOPT_XFERINFODATA, context.toOpaque()),
        ]
        if let refused = options.first(where: { $0 != CURLE_OK }) { return refused }
        return curl_easy_perform(handle)
    }

    /// libcurl's global state, made once before the first transfer.
    private static let initialized: Void = { curl_global_init(Int(CURL_GLOBAL_ALL)) }()

    /// The error URLSession gives for what libcurl reports, or nil for success. Its description
    /// is libcurl's own sentence, as Foundation on Linux gives it ("transfer closed with 16777216
    /// bytes remaining to read").
    static func urlError(for code: CURLcode, saying message: String, url: URL) -> URLError? {
        guard code != CURLE_OK else { return nil }
        let error: URLError.Code = switch code {
        case CURLE_UNSUPPORTED_PROTOCOL: .unsupportedURL
        case CURLE_URL_MALFORMAT: .badURL
        case CURLE_COULDNT_RESOLVE_HOST: .cannotFindHost
        case CURLE_COULDNT_CONNECT: .cannotConnectToHost
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE: .networkConnectionLost
        case CURLE_GOT_NOTHING, CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING: .badServerResponse
        case CURLE_PEER_FAILED_VERIFICATION: .serverCertificateUntrusted
        case CURLE_SSL_CONNECT_ERROR: .secureConnectionFailed
        default: .unknown
        }
        // libcurl's sentence for the code when it wrote none of its own.
        let sentence = message.isEmpty ? String(cString: curl_easy_strerror(code)) : message
        return URLError(error, userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: sentence])
    }
}

/// One request and its response: what libcurl's callbacks see.
private final class Hop {
    let url: URL
    let entry: HTTPExchangeLog.Entry
    let idleTime: Duration
    let isStopped: () -> Bool
    let didReceive: (HTTPURLResponse) -> Bool
    let didReceiveBody: (UnsafeRawBufferPointer) -> Bool
    /// The response whose header lines are arriving: its status, then its fields.
    private var status: Int?
    private var fields: [(name: String, value: String)] = []
    /// Set once the final response's header has ended: its body is handed over.
    private var answered = false
    /// A redirect's body is dropped, and the next request goes to its target.
    private(set) var redirect: (response: HTTPURLResponse, target: URL)?
    /// A callback said stop.
    private(set) var wasStopped = false
    /// The response broke a rule of the service's own: its header is longer than `headerLimit`.
    private(set) var refusal: URLError?
    private var headerBytes = 0
    /// libcurl limits one header line to 100 KiB but not their number: a server that never ends
    /// its header would fill memory.
    static let headerLimit = 256 << 10
    /// When the last byte arrived, and whether nothing came for `idleTime` since.
    private var lastArrival = ContinuousClock.now
    private var bytesSoFar: Int64 = 0
    private(set) var wasIdle = false
    /// Where libcurl writes its sentence about a failure.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    var curlMessage: String { String(cString: errorBuffer) }

    init(url: URL, entry: HTTPExchangeLog.Entry, idleSeconds: Double, isStopped: @escaping () -> Bool,
         didReceive: @escaping (HTTPURLResponse) -> Bool, didReceiveBody: @escaping (UnsafeRawBufferPointer) -> Bool) {
        self.url = url
        self.entry = entry
        idleTime = .milliseconds(max(1, Int(idleSeconds * 1000)))
        self.isStopped = isStopped
        self.didReceive = didReceive
        self.didReceiveBody = didReceiveBody
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit { errorBuffer.deallocate() }

    /// False stops the exchange.
    private func received(headerLine line: String) -> Bool {
        headerBytes += line.utf8.count
        guard headerBytes <= Self.headerLimit else {
            refusal = URLError(.badServerResponse, userInfo: [
                NSURLErrorFailingURLErrorKey: url,
                NSLocalizedDescriptionKey: "the server's header goes past \(Self.headerLimit >> 10) KiB",
            ])
            return stop(unless: false)
        }
        if line.hasPrefix("HTTP/") {
            // A new response: an interim 1xx, a redirect, or the final one.
            let parts = line.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) : nil
            fields = []
            return true
        }
        if !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return true }
            fields.append((String(line[..<colon]).trimmingCharacters(in: .whitespaces),
                           String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)))
            return true
        }
        guard let status, !(100..<200).contains(status) else { return true }
        // Repeated fields are joined, as Foundation joins them.
        let header = fields.reduce(into: [String: String]()) { header, field in
            header[field.name] = header[field.name].map { "\($0), \(field.value)" } ?? field.value
        }
        guard let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: header) else {
            return true
        }
        if (300..<400).contains(status), let location = response.value(forHTTPHeaderField: "Location"),
           let target = URL(string: location, relativeTo: url)?.absoluteURL, ["http", "https"].contains(target.scheme?.lowercased()) {
            redirect = (response, target)
            return true
        }
        entry.received(response)
        answered = true
        return stop(unless: didReceive(response))
    }

    private func received(body: UnsafeRawBufferPointer) -> Bool {
        guard redirect == nil else { return true }
        guard answered, !isStopped() else { return stop(unless: false) }
        entry.received(bodyBytes: body.count)
        return stop(unless: didReceiveBody(body))
    }

    private func stop(unless goingOn: Bool) -> Bool {
        if !goingOn { wasStopped = true }
        return goingOn
    }

    static let receiveHeaderLine: lab_curl_data_function = { data, size, count, context in
        let hop = Unmanaged<Hop>.fromOpaque(context!).takeUnretainedValue()
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
        return hop.received(headerLine: line.trimmingCharacters(in: .newlines)) ? size * count : 0
    }

    static let receiveBody: lab_curl_data_function = { data, size, count, context in
        let hop = Unmanaged<Hop>.fromOpaque(context!).takeUnretainedValue()
        return hop.received(body: UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
    }

    /// libcurl asks at least once a second, also while nothing arrives.
    static let askWhetherStopped: lab_curl_progress_function = { context, _, received, _, sent in
        let hop = Unmanaged<Hop>.fromOpaque(context!).takeUnretainedValue()
        let now = ContinuousClock.now
        if Int64(received) + Int64(sent) != hop.bytesSoFar {
            hop.bytesSoFar = Int64(received) + Int64(sent)
            hop.lastArrival = now
        } else if now - hop.lastArrival > hop.idleTime {
            hop.wasIdle = true
        }
        if hop.isStopped() { hop.wasStopped = true }
        return hop.wasStopped || hop.wasIdle ? 1 : 0
    }
}
