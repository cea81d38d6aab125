import CCurl
import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange through libcurl, for the transfer service's tasks: a download's GET, or an
/// upload's request with its body read from a file as it is sent. It runs on the calling thread
/// and hands the response's body over as it arrives: a slow receiver slows the sender through
/// TCP's window, so the service's memory stays flat whatever the disk and whatever the sender.
///
/// Why not URLSession, as everywhere else: on Linux, Foundation makes a timer for every 16 KiB
/// chunk, and the cancelled ones are freed only when libcurl's read loop gives its queue back,
/// which it does only once the socket is empty. A sender faster than the disk keeps it full, and
/// the timers pile up (docs/architecture.md, "A slow disk costs memory"). Apple's own service is
/// not URLSession either.
///
/// The contract:
/// - The request goes with its method and header fields as they are, and `body`'s file, when
///   there is one, as its body; `didSend` hears the bytes sent so far and the file's size. A
///   field with a line break is left out, and libcurl sets `Content-Length` and
///   `Transfer-Encoding` from the file.
/// - Redirects are followed, up to `maximumRedirects` (URLSession's limit), each recorded in the
///   exchange's log entry with the same header fields. A 307 or 308 sends the body again; any
///   other redirect of a request with a body is followed with a GET without one, as URLSession
///   does. One redirect more fails with `.httpTooManyRedirects`.
/// - `didReceive(response)` is called once, with the final response, before its body; false
///   stops the exchange.
/// - `didReceive(body)` gets the body's pieces in order; false stops the exchange.
/// - `isStopped` is asked at least once a second, and before each piece; true stops the
///   exchange, and no piece is handed over, nor sent, after it.
/// - Nothing received or sent for `idleSeconds` (or no connection within it) fails with
///   `.timedOut`, as URLSession's `timeoutIntervalForRequest`, a second late at most. The time
///   the closures take is not counted.
/// - A response whose header passes 256 KiB fails with `.badServerResponse`; a body file that
///   cannot be read fails with `.fileDoesNotExist`.
/// - It returns nil when the response ended as announced, `URLError(.cancelled)` when it was
///   stopped, `.networkConnectionLost` when the connection closed inside the final response's
///   header, or the `URLError` that URLSession gives for the same failure.
struct CurlExchange {
    static let maximumRedirects = 16
    let idleSeconds: Double
    let log: HTTPExchangeLog

    /// A request's body: a file, sent from its start to `size` bytes.
    struct BodyFile {
        let file: URL
        let size: Int64
    }

    func run(_ request: URLRequest, body: BodyFile? = nil, isStopped: @escaping () -> Bool,
             didSend: @escaping (_ sent: Int64, _ total: Int64) -> Void = { _, _ in },
             didReceive response: @escaping (HTTPURLResponse) -> Bool,
             didReceiveBody: @escaping (UnsafeRawBufferPointer) -> Bool) -> URLError? {
        _ = Self.initialized
        let entry = log.entry(for: request)
        func failed(_ error: URLError) -> URLError {
            entry.failed(reason: describe(error))
            return error
        }
        var request = request
        var body = body
        for _ in 0...Self.maximumRedirects {
            let hop = Hop(url: request.url!, entry: entry, idleSeconds: idleSeconds, isStopped: isStopped,
                          didSend: didSend, didReceive: response, didReceiveBody: didReceiveBody)
            if let body {
                let descriptor = open(body.file.path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    return failed(URLError(.fileDoesNotExist, userInfo: [
                        NSLocalizedDescriptionKey: "\(body.file.path): \(String(cString: strerror(errno)))",
                    ]))
                }
                hop.bodyDescriptor = descriptor
            }
            defer { if hop.bodyDescriptor >= 0 { close(hop.bodyDescriptor) } }
            let code = perform(request, body: body, hop)
            if let refusal = hop.refusal { return failed(refusal) }
            if hop.wasIdle { return failed(URLError(.timedOut, userInfo: [NSURLErrorFailingURLErrorKey: hop.url])) }
            if hop.wasStopped || code == CURLE_ABORTED_BY_CALLBACK { return failed(URLError(.cancelled)) }
            if let error = Self.urlError(for: code, saying: hop.curlMessage, url: hop.url) { return failed(error) }
            guard let redirect = hop.redirect else {
                // libcurl takes a connection closed inside the header for the end of a response
                // without a body: no response was handed over, and nothing was downloaded.
                guard hop.answered else { return failed(Self.headerNeverEnded(url: hop.url)) }
                return nil
            }
            request.url = redirect.target
            if body != nil, ![307, 308].contains(redirect.response.statusCode) {
                request.httpMethod = "GET"
                request.setValue(nil, forHTTPHeaderField: "Content-Type")
                body = nil
            }
            entry.redirected(by: redirect.response, to: request)
        }
        return failed(URLError(.httpTooManyRedirects))
    }

    private func perform(_ request: URLRequest, body: BodyFile?, _ hop: Hop) -> CURLcode {
        guard let handle = curl_easy_init() else { return CURLE_OUT_OF_MEMORY }
        defer { curl_easy_cleanup(handle) }
        var fields: UnsafeMutablePointer<curl_slist>?
        // The body's length is its file's; a field with a line break would split the request.
        for (name, value) in request.allHTTPHeaderFields ?? [:]
        where !["content-length", "transfer-encoding"].contains(name.lowercased()) && !"\(name)\(value)".contains(where: \.isNewline) {
            fields = curl_slist_append(fields, "\(name): \(value)")
        }
        // The body goes at once: libcurl would otherwise wait up to a second for a 100 Continue.
        if body != nil { fields = curl_slist_append(fields, "Expect:") }
        defer { curl_slist_free_all(fields) }
        let context = Unmanaged.passRetained(hop)
        defer { context.release() }
        let options: [CURLcode] = [
            lab_curl_set_string(handle, CURLOPT_URL, request.url!.absoluteString),
            lab_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            lab_curl_set_pointer(handle, CURLOPT_HTTPHEADER, fields),
            // URLSession on Linux decodes what the server compressed, whatever was asked for.
            lab_curl_set_string(handle, CURLOPT_ACCEPT_ENCODING, ""),
            // Threads, not signals: the service runs several transfers at once.
            lab_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
            lab_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(idleSeconds)),
            lab_curl_set_data_function(handle, CURLOPT_HEADERFUNCTION, Hop.receiveHeaderLine),
            lab_curl_set_pointer(handle, CURLOPT_HEADERDATA, context.toOpaque()),
            lab_curl_set_data_function(handle, CURLOPT_WRITEFUNCTION, Hop.receiveBody),
            lab_curl_set_pointer(handle, CURLOPT_WRITEDATA, context.toOpaque()),
            lab_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, hop.errorBuffer),
            lab_curl_set_long(handle, CURLOPT_NOPROGRESS, 0),
            lab_curl_set_progress_function(handle, Hop.askWhetherStopped),
            lab_curl_set_pointer(handle, CURLOPT_XFERINFODATA, context.toOpaque()),
        ]
        let sending: [CURLcode] = body.map { body in [
            lab_curl_set_long(handle, CURLOPT_UPLOAD, 1),
            lab_curl_set_offset(handle, CURLOPT_INFILESIZE_LARGE, curl_off_t(body.size)),
            lab_curl_set_data_function(handle, CURLOPT_READFUNCTION, Hop.sendBody),
            lab_curl_set_pointer(handle, CURLOPT_READDATA, context.toOpaque()),
        ] } ?? []
        // An upload would be a PUT by default.
        let method = request.httpMethod ?? "GET"
        let naming = method == "GET" && body == nil ? [] : [lab_curl_set_string(handle, CURLOPT_CUSTOMREQUEST, method)]
        if let refused = (options + sending + naming).first(where: { $0 != CURLE_OK }) { return refused }
        return curl_easy_perform(handle)
    }

    /// `seconds` as whole milliseconds, from 1 to a day's: a settings file cannot make it trap.
    static func milliseconds(_ seconds: Double) -> Int {
        guard seconds.isFinite else { return 86_400_000 }
        return Int(min(max(seconds, 0.001), 86_400) * 1000)
    }

    /// The connection closed before the response's header had ended: a network failure, which
    /// the service tries again.
    static func headerNeverEnded(url: URL) -> URLError {
        URLError(.networkConnectionLost, userInfo: [
            NSURLErrorFailingURLErrorKey: url,
            NSLocalizedDescriptionKey: "the connection closed before the response's header ended",
        ])
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
    let didSend: (Int64, Int64) -> Void
    let didReceive: (HTTPURLResponse) -> Bool
    let didReceiveBody: (UnsafeRawBufferPointer) -> Bool
    /// The open body file, or -1: read as libcurl asks for the next piece.
    var bodyDescriptor: Int32 = -1
    /// The response whose header lines are arriving: its status, then its fields.
    private var status: Int?
    private var fields: [(name: String, value: String)] = []
    /// Set once the final response's header has ended: its body is handed over.
    private(set) var answered = false
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
    /// When the last byte arrived or left, or the closures last returned, and whether nothing
    /// moved for `idleTime` since.
    private var lastArrival = ContinuousClock.now
    private var bytesSoFar: Int64 = 0
    private(set) var wasIdle = false
    /// Where libcurl writes its sentence about a failure.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    var curlMessage: String { String(cString: errorBuffer) }

    init(url: URL, entry: HTTPExchangeLog.Entry, idleSeconds: Double, isStopped: @escaping () -> Bool,
         didSend: @escaping (Int64, Int64) -> Void, didReceive: @escaping (HTTPURLResponse) -> Bool,
         didReceiveBody: @escaping (UnsafeRawBufferPointer) -> Bool) {
        self.url = url
        self.entry = entry
        idleTime = .milliseconds(CurlExchange.milliseconds(idleSeconds))
        self.isStopped = isStopped
        self.didSend = didSend
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
        defer { lastArrival = .now }
        return stop(unless: didReceiveBody(body))
    }

    /// The body's next piece, read into libcurl's buffer: its length, 0 at the file's end.
    private func send(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        guard !isStopped() else {
            wasStopped = true
            return Int(CURL_READFUNC_ABORT)
        }
        let count = read(bodyDescriptor, buffer, capacity)
        guard count >= 0 else {
            refusal = URLError(.fileDoesNotExist, userInfo: [NSLocalizedDescriptionKey: "the upload's file: \(String(cString: strerror(errno)))"])
            return Int(CURL_READFUNC_ABORT)
        }
        return count
    }

    private func stop(unless goingOn: Bool) -> Bool {
        if !goingOn { wasStopped = true }
        return goingOn
    }

    static let receiveHeaderLine: lab_curl_data_function = { data, size, count, context in
        let hop = Unmanaged<Hop>.fromOpaque(context!).takeUnretainedValue()
        let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
        defer { hop.lastArrival = .now }
        return hop.received(headerLine: line.trimmingCharacters(in: .newlines)) ? size * count : 0
    }

    static let receiveBody: lab_curl_data_function = { data, size, count, context in
        let hop = Unmanaged<Hop>.fromOpaque(context!).takeUnretainedValue()
        return hop.received(body: UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
    }

    static let sendBody: lab_curl_data_function = { buffer, size, count, context in
        let hop = Unmanaged<Hop>.fromOpaque(context!).takeUnretainedValue()
        return hop.send(into: buffer!, capacity: size * count)
    }

    /// libcurl asks at least once a second, also while nothing arrives.
    static let askWhetherStopped: lab_curl_progress_function = { context, _, received, toSend, sent in
        let hop = Unmanaged<Hop>.fromOpaque(context!).takeUnretainedValue()
        if Int64(received) + Int64(sent) != hop.bytesSoFar {
            if hop.bodyDescriptor >= 0, sent > 0 { hop.didSend(Int64(sent), Int64(toSend)) }
            hop.bytesSoFar = Int64(received) + Int64(sent)
            hop.lastArrival = .now
        } else if ContinuousClock.now - hop.lastArrival > hop.idleTime {
            hop.wasIdle = true
        }
        if hop.isStopped() { hop.wasStopped = true }
        return hop.wasStopped || hop.wasIdle ? 1 : 0
    }
}
