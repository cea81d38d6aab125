import LabVocabulary

/// One request as the server saw and answered it, for tests that check what a client did.
public struct LoggedRequest: Hashable, Sendable {
    public var method: RequestMethod
    /// The request target as sent, e.g. `/fixtures/a?size=1MiB&faults=drop:10pct`.
    public var target: String
    public var range: String?
    public var ifRange: String?
    public var status: Int
    /// Body bytes handed to the connection (fewer than Content-Length after a drop or stall).
    public var bodyBytesSent: Int64
    /// The fault-script attempt this request played; 0 for requests outside /fixtures.
    public var attempt: Int
    /// Request body bytes read: what an upload sent (0 for requests without a body).
    public var requestBodyBytes: Int64
    /// The file parts of an upload the server accepted, as it stored them.
    public var uploadedFiles: [UploadedFile]
    /// The body stopped at its `stall` fault: what a run killed "at the break" waits for.
    public var stalled = false
    /// Seconds from the request's head arriving to the response's head going out: the time to
    /// first byte a client on loopback sees, a `latency` or a profile's included.
    public var firstByteSeconds: Double = 0
    /// When the request's head arrived, and when its last body bytes were handed to the
    /// connection, in seconds since 1970: a run that printed no record (one killed) is drawn
    /// from these.
    public var arrivedAt: Double = 0
    public var lastBodyBytesAt: Double?
    /// The response's Content-Length as sent (nil for a chunked body): a body that stopped short
    /// of it broke.
    public var responseLength: Int64?

    /// One file part of an upload: its count and digest, never its bytes.
    public struct UploadedFile: Hashable, Sendable {
        public var field: String
        public var filename: String
        public var bytes: Int64
        public var sha256Hex: String
    }

    public init(method: RequestMethod, target: String, range: String?, ifRange: String?,
                status: Int, bodyBytesSent: Int64, attempt: Int, requestBodyBytes: Int64 = 0,
                uploadedFiles: [UploadedFile] = [], firstByteSeconds: Double = 0, arrivedAt: Double = 0,
                responseLength: Int64? = nil) {
        self.method = method
        self.target = target
        self.range = range
        self.ifRange = ifRange
        self.status = status
        self.bodyBytesSent = bodyBytesSent
        self.attempt = attempt
        self.requestBodyBytes = requestBodyBytes
        self.uploadedFiles = uploadedFiles
        self.firstByteSeconds = firstByteSeconds
        self.arrivedAt = arrivedAt
        self.responseLength = responseLength
    }
}

extension Collection where Element == LoggedRequest {
    /// The most of these requests that were being sent the file (a 200 or a 206) at one moment:
    /// at each one's arrival, those that had arrived and had not yet handed over their last
    /// body bytes.
    public var mostSendingAtOnce: Int {
        let sending = filter { ($0.status == 200 || $0.status == 206) && $0.bodyBytesSent > 0 }
        return sending.map { request in
            sending.filter { $0.arrivedAt <= request.arrivedAt && ($0.lastBodyBytesAt ?? $0.arrivedAt) >= request.arrivedAt }.count
        }.max() ?? 0
    }

    /// How many answers of 503 were followed by a GET for the same range before their
    /// `Retry-After` had passed, counted from when the 503's head went out. Only a client that
    /// asks sooner than it was told can add to it: a loaded machine makes a client later, not
    /// sooner.
    public func askedAgainBeforeRetryAfter(seconds retryAfter: Double) -> Int {
        let gets = filter { $0.method == .get }.sorted { $0.arrivedAt < $1.arrivedAt }
        return gets.enumerated().filter { index, busy in
            guard busy.status == 503 else { return false }
            let answeredAt = busy.arrivedAt + busy.firstByteSeconds
            guard let next = gets[(index + 1)...].first(where: { $0.range == busy.range }) else { return false }
            return next.arrivedAt - answeredAt < retryAfter
        }.count
    }

    /// The requests with a body the server received that `recorded`, a run's record of what its
    /// session sent, does not have: an upload sent around the session the lab inspects (libcurl
    /// in the process, a program that is not the process's child). Counted by method, which the
    /// server and the inspector both see.
    public func uploadsNotIn(_ recorded: [HTTPExchange]) -> Int {
        let sendsABody: (RequestMethod) -> Bool = { $0 != .get && $0 != .head }
        let received = filter { sendsABody($0.method) || $0.requestBodyBytes > 0 }.count
        return Swift.max(0, received - recorded.filter { sendsABody($0.method) }.count)
    }

    /// Once a GET has stopped at its stall and every other that sends the file has stalled or
    /// sent its whole body, the body bytes sent in all: the moment a run may be killed "at the
    /// stall", known from the server's log rather than a clock. Nil before.
    public var bytesSentOnceQuietAfterAStall: Int64? {
        let sending = filter { $0.method == .get && ($0.status == 200 || $0.status == 206) }
        guard sending.contains(where: \.stalled),
              sending.allSatisfy({ request in request.stalled || request.responseLength.map { request.bodyBytesSent >= $0 } ?? false })
        else { return nil }
        return sending.reduce(0) { $0 + $1.bodyBytesSent }
    }
}
