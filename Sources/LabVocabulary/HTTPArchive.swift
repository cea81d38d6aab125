import Foundation

/// A run's exchanges as an HTTP Archive, HAR 1.2 (Jan Odvarko's specification, the format of
/// Chrome's and Firefox's network panels, Charles and Proxyman): each request and its response,
/// their headers, sizes and timings, with the fault the lab server played on it as the entry's
/// comment. Made from a lesson's record, so a HAR says what the record says.
public struct HTTPArchive: Encodable, Sendable {
    public let log: Log

    /// `faults`: the server's script, whose n-th attempt the n-th GET played; `comment`: what ran.
    public init(exchanges: [HTTPExchange], faults: FaultScript, comment: String) {
        var gets = 0
        var entries: [Entry] = []
        for exchange in exchanges {
            if exchange.method == .get { gets += 1 }
            guard let started = exchange.startedAt else { continue }
            let fault = exchange.method == .get ? faults.faults(forAttempt: gets) : []
            entries.append(Entry(exchange, started: started, fault: fault))
        }
        let untimed = exchanges.count - entries.count
        log = Log(version: "1.2", creator: Creator(name: "Download Lab", version: LabVersion.current), entries: entries,
                  comment: comment + (untimed == 0 ? "" : "; \(untimed) exchange\(untimed == 1 ? "" : "s") the lab could not time left out"))
    }

    /// The archive as a file: UTF-8 JSON, keys sorted, every string escaped by the encoder.
    public func json() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    public struct Log: Encodable, Sendable {
        public let version: String
        public let creator: Creator
        public let entries: [Entry]
        public let comment: String
    }

    public struct Creator: Encodable, Sendable {
        public let name: String
        public let version: String
    }

    public struct Entry: Encodable, Sendable {
        public let startedDateTime: String
        /// Milliseconds, the sum of the timings that are not -1.
        public let time: Double
        public let request: Request
        public let response: Response
        public let cache: [String: String] = [:]
        public let timings: Timings
        public let comment: String

        init(_ exchange: HTTPExchange, started: Double, fault: [FaultScript.Fault]) {
            startedDateTime = Self.iso8601(started)
            let head = exchange.firstByteAt ?? exchange.endedAt ?? started
            let ended = max(exchange.endedAt ?? head, head)
            // Milliseconds to the microsecond: the record keeps milliseconds.
            func milliseconds(_ seconds: Double) -> Double { (max(seconds, 0) * 1_000_000).rounded() / 1000 }
            timings = Timings(send: 0, wait: milliseconds(head - started), receive: milliseconds(ended - head))
            time = timings.send + timings.wait + timings.receive
            request = Request(exchange)
            response = Response(exchange)
            var notes: [String] = []
            if !fault.isEmpty { notes.append("fault: " + fault.map(\.description).joined(separator: "+")) }
            if let error = exchange.error { notes.append("broke: \(error)") }
            comment = notes.joined(separator: "; ")
        }

        static func iso8601(_ seconds: Double) -> String {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.string(from: Date(timeIntervalSince1970: seconds))
        }
    }

    public struct Request: Encodable, Sendable {
        public let method: String
        public let url: String
        public let httpVersion = "HTTP/1.1"
        public let cookies: [HeaderField] = []
        public let headers: [HeaderField]
        public let queryString: [HeaderField]
        public let headersSize = -1
        /// Unknown for an upload (its body is the lab's file, streamed), 0 otherwise.
        public let bodySize: Int64

        init(_ exchange: HTTPExchange) {
            method = exchange.method.rawValue
            url = exchange.url
            headers = exchange.requestHeaders ?? []
            queryString = (URLComponents(string: exchange.url)?.queryItems ?? []).map { HeaderField(name: $0.name, value: $0.value ?? "") }
            bodySize = exchange.method == .post ? -1 : 0
        }
    }

    public struct Response: Encodable, Sendable {
        /// 0 when no response came, as the browsers write it.
        public let status: Int
        public let statusText: String
        public let httpVersion: String
        public let cookies: [HeaderField] = []
        public let headers: [HeaderField]
        public let content: Content
        public let redirectURL: String
        public let headersSize = -1
        public let bodySize: Int64

        init(_ exchange: HTTPExchange) {
            status = exchange.status ?? 0
            // Another status is written with no reason phrase, as HTTP/2 has none.
            statusText = HTTPStatus.reason(status) ?? ""
            httpVersion = exchange.status == nil ? "" : "HTTP/1.1"
            let fields = exchange.responseHeaders ?? []
            headers = fields
            let header = { (name: String) in fields.first { $0.name.lowercased() == name }?.value }
            content = Content(size: exchange.bodyBytes, mimeType: header("content-type") ?? "")
            redirectURL = header("location") ?? ""
            bodySize = exchange.status == nil ? -1 : exchange.bodyBytes
        }
    }

    public struct Content: Encodable, Sendable {
        /// The body's bytes as the app received them (decoded, when the server compressed it).
        public let size: Int64
        public let mimeType: String
    }

    public struct Timings: Encodable, Sendable {
        /// What the lab cannot see from inside the session: -1, "does not apply", as HAR allows.
        public let blocked = -1.0
        public let dns = -1.0
        public let connect = -1.0
        public let ssl = -1.0
        public let send: Double
        public let wait: Double
        public let receive: Double
    }
}
