import Foundation

/// What `lab compare` measured: the contents of `results.json`, and what `lab report` reads.
///
/// Every field is described in docs/results-schema.md; a test holds the two
/// together. Optional fields are absent from the file when they have no value.
public struct ComparisonResults: Codable, Sendable, Equatable {
    public static let currentSchema = "download-lab.results/1"

    public var schema = ComparisonResults.currentSchema
    /// Which machine (or student) measured this; the hostname unless `--label` says otherwise.
    public var label: String
    public var environment: Environment
    public var settings: Settings
    public var references: [Reference]
    public var runs: [Run]
    /// Lesson 11 beside aria2c and curl over 1, 2, 4 and 8 connections; absent when lesson 11
    /// did not run clean against the embedded server.
    public var connections: [ConnectionsRun]?
    /// The runs over loopback: every run but those played over a network profile, which only
    /// the report's slow-network section reads.
    public var loopbackRuns: [Run] { runs.filter { $0.network == nil } }

    public init(label: String, environment: Environment, settings: Settings,
                references: [Reference], runs: [Run]) {
        self.label = label
        self.environment = environment
        self.settings = settings
        self.references = references
        self.runs = runs
    }

    /// The machine and software the numbers come from.
    public struct Environment: Codable, Sendable, Equatable {
        public var hostname: String
        public var cpuModel: String
        public var cores: Int
        public var memoryBytes: Int64
        public var operatingSystem: String
        public var swiftVersion: String
        /// "debug" or "release": how the lesson executables were built.
        public var buildConfiguration: BuildConfiguration
        /// "embedded" (a LabServer inside `lab compare`) or "external" (`--server`).
        public var serverKind: ServerKind
        public var serverURL: String
        /// When the comparison started, ISO 8601 in UTC.
        public var startedAt: String
        public var durationSeconds: Double

        public init(hostname: String, cpuModel: String, cores: Int, memoryBytes: Int64,
                    operatingSystem: String, swiftVersion: String, buildConfiguration: BuildConfiguration,
                    serverKind: ServerKind, serverURL: String, startedAt: String, durationSeconds: Double) {
            self.hostname = hostname
            self.cpuModel = cpuModel
            self.cores = cores
            self.memoryBytes = memoryBytes
            self.operatingSystem = operatingSystem
            self.swiftVersion = swiftVersion
            self.buildConfiguration = buildConfiguration
            self.serverKind = serverKind
            self.serverURL = serverURL
            self.startedAt = startedAt
            self.durationSeconds = durationSeconds
        }
    }

    /// What was asked for.
    public struct Settings: Codable, Sendable, Equatable {
        /// "default", "quick", "full" or "custom".
        public var preset: Preset
        /// File sizes of the clean scenario, smallest first.
        public var sizes: [Int64]
        /// The file size every fault scenario uses.
        public var faultSize: Int64
        /// Lesson ids (`LessonID` raw values).
        public var lessons: [String]
        /// The scenarios that ran (docs/compare-and-report.md#scenarios).
        public var scenarios: [Scenario]
        /// How often each clean run was repeated.
        public var repetitions: Int
        /// How often each fault scenario's run was repeated; absent in a record from before it
        /// differed, where it is `repetitions`.
        public var faultRepetitions: Int?
        /// The write delay of the slow-disk scenario.
        public var slowDiskWriteDelayMicroseconds: Int
        /// The network profiles the corrected variants also ran over (`--profile`, `--full`);
        /// absent when none.
        public var networks: [NetworkProfile]?
        /// How often each run over a profile was repeated.
        public var networkRepetitions: Int?

        /// How often each fault scenario's run was repeated, in a record of any age.
        public var faultRunRepetitions: Int { faultRepetitions ?? repetitions }

        /// "clean runs 3 times each, fault scenarios once", as the report and the pages say it.
        public var repetitionsSaid: String {
            faultRunRepetitions == repetitions ? "every run \(Self.times(repetitions))"
                : "clean runs \(Self.times(repetitions)) each, fault scenarios \(Self.times(faultRunRepetitions))"
        }

        /// "once", "twice", "3 times".
        public static func times(_ count: Int) -> String { count == 1 ? "once" : count == 2 ? "twice" : "\(count) times" }

        public init(preset: Preset, sizes: [Int64], faultSize: Int64, lessons: [String],
                    scenarios: [Scenario], repetitions: Int, slowDiskWriteDelayMicroseconds: Int,
                    networks: [NetworkProfile]? = nil, networkRepetitions: Int? = nil, faultRepetitions: Int? = nil) {
            self.preset = preset
            self.sizes = sizes
            self.faultSize = faultSize
            self.lessons = lessons
            self.scenarios = scenarios
            self.repetitions = repetitions
            self.faultRepetitions = faultRepetitions
            self.slowDiskWriteDelayMicroseconds = slowDiskWriteDelayMicroseconds
            self.networks = networks
            self.networkRepetitions = networkRepetitions
        }
    }

    /// A yardstick measured in the same run: another client, or a physical limit.
    public struct Reference: Codable, Sendable, Equatable {
        /// "curl", "wget", "loopback-limit" or "disk-limit".
        public var kind: ReferenceKind
        /// What ran, e.g. "curl 7.88.1 -o FILE" or "read to /dev/null".
        public var detail: String
        public var sizeBytes: Int64
        /// Medians over the repetitions.
        public var wallSeconds: Double
        public var throughputBytesPerSecond: Double
        /// Absent for a limit measured inside `lab compare` itself.
        public var peakRSSBytes: Int64?

        public init(kind: ReferenceKind, detail: String, sizeBytes: Int64, wallSeconds: Double,
                    throughputBytesPerSecond: Double, peakRSSBytes: Int64?) {
            self.kind = kind
            self.detail = detail
            self.sizeBytes = sizeBytes
            self.wallSeconds = wallSeconds
            self.throughputBytesPerSecond = throughputBytesPerSecond
            self.peakRSSBytes = peakRSSBytes
        }
    }

    /// One lesson, variant, scenario and size, run `settings.repetitions` times.
    /// How a case came out, over all its repetitions.
    public enum RunStatus: String, Codable, Sendable, LabName {
        /// Every repetition downloaded the file, and it verified.
        case pass
        case fail
        /// The lesson declined on purpose with a clear error, as lesson 00 corrected does with a
        /// file too big to hold.
        case refused
    }

    public struct Run: Codable, Sendable, Equatable {
        /// The lesson id (a `LessonID` raw value; a file from elsewhere may name others).
        public var lesson: String
        /// A short name for people, e.g. "OutputStream append".
        public var title: String
        /// "article" or "corrected".
        public var variant: Variant
        public var scenario: Scenario
        public var sizeBytes: Int64
        public var status: RunStatus
        /// A failure the lesson's article variant is there to show.
        public var expectedFailure: Bool
        /// Why it failed, in one line; absent when it passed.
        public var cause: String?
        /// Medians over the repetitions.
        public var wallSeconds: Double
        public var cpuSeconds: Double
        public var peakRSSBytes: Int64
        public var throughputBytesPerSecond: Double
        public var bytesOnWire: Int64
        public var bytesDownloadedAgain: Int64
        /// The lesson's own clock around its attempts (`wallSeconds` of its record): the
        /// strategy's time, without process start-up, setup and verification. Absent when the
        /// lesson printed no record, and for kill-rerun, whose record covers the rerun only.
        public var transferSeconds: Double?
        /// Reading the file back and hashing it, after the transfer (0 for an upload).
        public var verificationSeconds: Double?
        /// The reference `kind` that does the same transfer with nothing around it, run right
        /// before each repetition: `foundation-floor` for a download, `curl-form` for an upload.
        /// Absent where no reference was paired (article variants, fault scenarios).
        public var reference: ReferenceKind?
        /// Median wall time of the paired reference runs.
        public var referenceSeconds: Double?
        /// Median over the repetitions of transfer ÷ its paired reference's wall time.
        public var costRatio: Double?
        /// The network profile the run was played over; absent for loopback.
        public var network: NetworkProfile?
        /// Median seconds from the first GET arriving at the embedded server to its response's head.
        public var firstByteSeconds: Double?
        public var repetitions: [Repetition]
        /// What the second launch of a `relaunch` scenario did, in the median repetition.
        public var secondLaunch: SecondLaunch?
        /// RSS of the median repetition while it ran; absent when not sampled.
        public var rssTimeline: [RSSSample]?
        /// The exchanges of the median repetition against time, for the lesson's picture.
        public var exchangeTimeline: ExchangeTimeline? = nil

        public init(lesson: String, title: String, variant: Variant, scenario: Scenario, sizeBytes: Int64,
                    status: RunStatus, expectedFailure: Bool, cause: String?, wallSeconds: Double,
                    cpuSeconds: Double, peakRSSBytes: Int64, throughputBytesPerSecond: Double,
                    bytesOnWire: Int64, bytesDownloadedAgain: Int64, repetitions: [Repetition],
                    rssTimeline: [RSSSample]?, transferSeconds: Double? = nil, verificationSeconds: Double? = nil,
                    reference: ReferenceKind? = nil, referenceSeconds: Double? = nil, costRatio: Double? = nil,
                    network: NetworkProfile? = nil, firstByteSeconds: Double? = nil, secondLaunch: SecondLaunch? = nil) {
            self.lesson = lesson
            self.title = title
            self.variant = variant
            self.scenario = scenario
            self.sizeBytes = sizeBytes
            self.status = status
            self.expectedFailure = expectedFailure
            self.cause = cause
            self.wallSeconds = wallSeconds
            self.cpuSeconds = cpuSeconds
            self.peakRSSBytes = peakRSSBytes
            self.throughputBytesPerSecond = throughputBytesPerSecond
            self.bytesOnWire = bytesOnWire
            self.bytesDownloadedAgain = bytesDownloadedAgain
            self.repetitions = repetitions
            self.rssTimeline = rssTimeline
            self.transferSeconds = transferSeconds
            self.verificationSeconds = verificationSeconds
            self.reference = reference
            self.referenceSeconds = referenceSeconds
            self.costRatio = costRatio
            self.network = network
            self.firstByteSeconds = firstByteSeconds
            self.secondLaunch = secondLaunch
        }
    }

    /// A second launch with the finished file (`relaunch`, `relaunch-changed`): its requests,
    /// the body bytes they brought, how long it took to have the current file, and the disk that
    /// the file and Foundation's URL cache then use.
    public struct SecondLaunch: Codable, Sendable, Equatable {
        /// "HEAD 200", "GET 304", in order.
        public var requests: [String]
        public var bodyBytes: Int64
        public var seconds: Double
        public var fileBytes: Int64
        /// What Foundation's URL cache holds on disk for the program, after both launches.
        public var cacheBytes: Int64

        public init(requests: [String], bodyBytes: Int64, seconds: Double, fileBytes: Int64, cacheBytes: Int64) {
            self.requests = requests
            self.bodyBytes = bodyBytes
            self.seconds = seconds
            self.fileBytes = fileBytes
            self.cacheBytes = cacheBytes
        }
    }

    /// One child process (or, for kill-rerun, the killed process and its rerun together).
    public struct Repetition: Codable, Sendable, Equatable {
        public var exitCode: Int32
        /// The lesson's own outcome ("verified", "transfer-failed", …), or "crashed" /
        /// "timed-out" when it printed no record.
        public var outcome: Outcome
        /// The harness's own check: the file's SHA-256 and size match the resource.
        public var verified: Bool
        public var wallSeconds: Double
        public var cpuSeconds: Double
        /// From the kernel (wait4's ru_maxrss).
        public var peakRSSBytes: Int64
        public var throughputBytesPerSecond: Double
        /// Response body bytes the server sent to this run (upload: request body bytes).
        public var bytesOnWire: Int64
        /// Bytes on the wire beyond one copy of the resource.
        public var bytesDownloadedAgain: Int64
        /// As in `Run`, for this process.
        public var transferSeconds: Double?
        public var verificationSeconds: Double?
        /// Wall time of the reference run paired with this one (`Run.reference`), if any.
        public var referenceSeconds: Double?
        /// The lesson's one-line error, if any.
        public var error: String?
        /// Seconds from the first GET arriving at the embedded server to its response's head.
        public var firstByteSeconds: Double?
        /// The second launch of a `relaunch` scenario.
        public var secondLaunch: SecondLaunch?

        public init(exitCode: Int32, outcome: Outcome, verified: Bool, wallSeconds: Double,
                    cpuSeconds: Double, peakRSSBytes: Int64, throughputBytesPerSecond: Double,
                    bytesOnWire: Int64, bytesDownloadedAgain: Int64, error: String?,
                    transferSeconds: Double? = nil, verificationSeconds: Double? = nil, firstByteSeconds: Double? = nil,
                    secondLaunch: SecondLaunch? = nil) {
            self.exitCode = exitCode
            self.outcome = outcome
            self.verified = verified
            self.wallSeconds = wallSeconds
            self.cpuSeconds = cpuSeconds
            self.peakRSSBytes = peakRSSBytes
            self.throughputBytesPerSecond = throughputBytesPerSecond
            self.bytesOnWire = bytesOnWire
            self.bytesDownloadedAgain = bytesDownloadedAgain
            self.transferSeconds = transferSeconds
            self.verificationSeconds = verificationSeconds
            self.error = error
            self.firstByteSeconds = firstByteSeconds
            self.secondLaunch = secondLaunch
        }
    }

    /// Resident memory at a moment of a run, as the system reports it (VmRSS on Linux).
    public struct RSSSample: Codable, Sendable, Equatable {
        /// Seconds since the child started.
        public var t: Double
        public var rssBytes: Int64

        public init(t: Double, rssBytes: Int64) {
            self.t = t
            self.rssBytes = rssBytes
        }
    }
}

extension ComparisonResults {
    /// Reads a results file, refusing another schema with a one-line reason.
    /// A full comparison's file is a few megabytes.
    public static let largestFile: Int64 = 64 << 20
    /// A machine's or a student's name, not a text.
    public static let longestLabel = 200

    public static func read(from file: URL) throws -> ComparisonResults {
        // A results file is a regular file: /dev/zero would never end, a FIFO would never start.
        let type = try? FileManager.default.attributesOfItem(atPath: file.path)[.type] as? FileAttributeType
        guard type == .typeRegular else {
            throw ResultsFileError(path: file.path, reason: type == nil ? "cannot read it" : "not a regular file",
                                   isUnreadable: true)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
        guard size <= largestFile else {
            throw ResultsFileError(path: file.path, reason: "\(size) bytes is far larger than any results file (at most \(largestFile))")
        }
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw ResultsFileError(path: file.path, reason: "cannot read it", isUnreadable: true)
        }
        let results: ComparisonResults
        switch SchemaCheckedJSON.decode(ComparisonResults.self, from: data, schema: currentSchema, kind: "results file") {
        case .success(let decoded): results = decoded
        case .failure(let problem): throw ResultsFileError(path: file.path, reason: problem.reason)
        }
        // The label stands in every table and legend of the page.
        guard results.label.count <= longestLabel else {
            throw ResultsFileError(path: file.path, reason: "its label has \(results.label.count) characters; at most \(longestLabel)")
        }
        return results
    }

    /// Writes the file pretty-printed with sorted keys, so two runs diff well.
    public func write(to file: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: file, options: .atomic)
    }
}

/// A results file that cannot be used, with the reason in one line.
public struct ResultsFileError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    /// True when the file could not be read at all (missing, not a regular file, no permission);
    /// false when it was read but is not a results file.
    public var isUnreadable = false
    public var description: String { "\(path): \(reason)" }
}
