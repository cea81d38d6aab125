import Foundation

/// The record a lesson prints with `--json`: one object, the contract with `lab compare`.
/// Every field is described in docs/running-a-lesson.md.
public struct LessonResult: Codable, Sendable {
    public static let currentSchema = "download-lab.lesson-result/1"

    public struct ErrorRecord: Codable, Sendable, Equatable {
        public var domain: String
        public var code: Int
        public var message: String

        public init(domain: String, code: Int, message: String) {
            self.domain = domain
            self.code = code
            self.message = message
        }
    }

    public var schema = LessonResult.currentSchema
    public var lesson: LessonID
    public var variant: Variant
    /// The way that ran, for a lesson that shows several (`LessonID.ways`); nil otherwise.
    public var way: String?
    public var url: String
    public var output: String
    public var outcome: Outcome
    public var exitCode: Int32
    public var verified: Bool
    public var expectedSHA256: String?
    public var actualSHA256: String?
    public var resourceBytes: Int64?
    public var fileBytes: Int64
    public var bytesReceived: Int64
    public var bytesWritten: Int64
    public var bytesDownloadedAgain: Int64
    public var attempts: Int
    public var resumedFrom: [Int64]
    public var wallSeconds: Double
    /// Reading the file back and hashing it, after the last attempt (0 when nothing was read back:
    /// an upload, which the server's answer verifies, or a failed download).
    public var verificationSeconds: Double
    public var cpuSeconds: Double
    public var peakRSSBytes: Int64
    public var throughputBytesPerSecond: Double
    public var writeDelayMicroseconds: Int
    public var requests: [HTTPExchange]
    public var error: ErrorRecord?
    /// What the code's progress reports said; nil when the harness did not watch them (a run
    /// ended early by a limit).
    public var progress: ProgressRecord?
    /// Whether the lesson's code started a program (curl, say), which an iOS app cannot: then
    /// what the run did proves nothing of the code's own work. Every run's record says.
    public var startedAProgram: Bool?
    /// Resident memory before the lesson's code first ran, in bytes: what the lab itself holds.
    public var residentBeforeTheCodeBytes: Int64?
    /// Lesson 09: what the phone saw of the app's life; nil for every other lesson.
    public var background: BackgroundRecord?
    /// What happened to the run besides its requests, in order: a press of Resume, a second
    /// launch, lesson 09's life (the app suspended, ended, relaunched). Absent when nothing did.
    public var events: [RunEvent]?

    public init(lesson: LessonID,
                variant: Variant,
                way: String?,
                url: String,
                output: String,
                outcome: Outcome,
                exitCode: Int32,
                verified: Bool,
                expectedSHA256: String?,
                actualSHA256: String?,
                resourceBytes: Int64?,
                fileBytes: Int64,
                bytesReceived: Int64,
                bytesWritten: Int64,
                bytesDownloadedAgain: Int64,
                attempts: Int,
                resumedFrom: [Int64],
                wallSeconds: Double,
                verificationSeconds: Double,
                cpuSeconds: Double,
                peakRSSBytes: Int64,
                throughputBytesPerSecond: Double,
                writeDelayMicroseconds: Int,
                requests: [HTTPExchange],
                error: ErrorRecord?) {
        self.lesson = lesson
        self.variant = variant
        self.way = way
        self.url = url
        self.output = output
        self.outcome = outcome
        self.exitCode = exitCode
        self.verified = verified
        self.expectedSHA256 = expectedSHA256
        self.actualSHA256 = actualSHA256
        self.resourceBytes = resourceBytes
        self.fileBytes = fileBytes
        self.bytesReceived = bytesReceived
        self.bytesWritten = bytesWritten
        self.bytesDownloadedAgain = bytesDownloadedAgain
        self.attempts = attempts
        self.resumedFrom = resumedFrom
        self.wallSeconds = wallSeconds
        self.verificationSeconds = verificationSeconds
        self.cpuSeconds = cpuSeconds
        self.peakRSSBytes = peakRSSBytes
        self.throughputBytesPerSecond = throughputBytesPerSecond
        self.writeDelayMicroseconds = writeDelayMicroseconds
        self.requests = requests
        self.error = error
    }
}

/// One request a lesson sent and what came back, as the lab's network inspector saw it.
public struct HTTPExchange: Codable, Sendable, Equatable {
    public var method: RequestMethod
    public var url: String
    public var range: String?
    public var ifRange: String?
    /// A conditional request's validators (lesson 10): the ETag and the date it sent back.
    public var ifNoneMatch: String?
    public var ifModifiedSince: String?
    public var status: Int?
    public var contentRange: String?
    public var contentLength: Int64?
    public var etag: String?
    /// The SHA-256 the server published for the whole representation (RFC 9530 `Repr-Digest`), in hex.
    public var reprDigestSHA256: String?
    public var bodyBytes: Int64 = 0
    public var error: String?
    /// When the request was handed over, when its response's head arrived, and when the last
    /// thing was heard of it (its last chunk, its failure), in seconds since 1970: what a
    /// timeline or a HAR file draws. Absent where nothing timed it.
    public var startedAt: Double?
    public var firstByteAt: Double?
    public var endedAt: Double?
    /// The headers the app set on the request (URLSession adds its own, such as
    /// `Accept-Encoding`, which it does not show), and the response's, sorted by name.
    public var requestHeaders: [HeaderField]?
    public var responseHeaders: [HeaderField]?

    public init(method: RequestMethod, url: String, range: String? = nil, ifRange: String? = nil,
                ifNoneMatch: String? = nil, ifModifiedSince: String? = nil, status: Int? = nil, contentRange: String? = nil, contentLength: Int64? = nil, etag: String? = nil, reprDigestSHA256: String? = nil, bodyBytes: Int64 = 0, error: String? = nil) {
        self.method = method
        self.url = url
        self.range = range
        self.ifRange = ifRange
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
        self.status = status
        self.contentRange = contentRange
        self.contentLength = contentLength
        self.etag = etag
        self.reprDigestSHA256 = reprDigestSHA256
        self.bodyBytes = bodyBytes
        self.error = error
    }
}

/// One header, as HAR writes it.
public struct HeaderField: Codable, Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// The fields of a header dictionary, sorted by name, for a record that reads the same each run.
    public static func sorted(_ fields: [String: String]) -> [HeaderField] {
        fields.map { HeaderField(name: $0.key, value: $0.value) }.sorted { ($0.name.lowercased(), $0.value) < ($1.name.lowercased(), $1.value) }
    }
}

/// One thing that happened to a run at a moment, for its timeline.
public struct RunEvent: Codable, Sendable, Equatable {
    /// Seconds since 1970, the clock of the exchanges' times.
    public var at: Double
    /// A few words: "Resume", "launch 2", "suspended".
    public var what: String

    public init(at: Double, what: String) {
        self.at = at
        self.what = what
    }
}
