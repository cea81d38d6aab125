import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabVocabulary
import Synchronization

/// A lesson's strategy: one object per run, like the article's view controller.
public protocol LessonDownload: AnyObject {
    /// One press of "Start" (or "Resume"): returns when this attempt has finished or failed.
    func downloadFile() -> AttemptResult
}

/// A lesson's strategy written with async/await (lesson 08): one value per run.
public protocol AsyncLessonDownload: Sendable {
    /// One press of "Start" (or "Resume"): returns when this attempt has finished or failed.
    func downloadFile() async -> AttemptResult
}

/// An upload lesson's strategy (a lesson whose `LessonID.kind` is `.upload`): one object per run.
public protocol LessonUpload: AnyObject {
    /// One press of "Send": returns when this attempt has finished or failed.
    func uploadFile() -> AttemptResult
}

/// What a lesson's code gets from the lab: where to download from and to, and how to report.
public struct LessonRun: Sendable {
    public let url: URL
    /// The same resource with no faults injected, for demonstrations beside the download.
    public let faultFreeURL: URL
    public let file: URL
    public let variant: Variant
    /// The raw value of the way chosen with `--way` (or the lesson's first), for a lesson that
    /// shows several; `way(_:)` gives it typed.
    public let way: String?
    public let progress: ProgressBar
    /// For a lesson that uploads (`uploads`): the generated file to send, which the lab writes
    /// into `file` before the first attempt (`sha256Hex()` gives its digest). nil otherwise.
    public let uploadFixture: Fixture?
    let console: Console
    let savedFile = SavedFile()
    let ownCheck = OwnCheck()

    /// For a lesson that names its own file (`savesIntoFolder`): this is the file to verify.
    public func saved(_ file: URL) { savedFile.url.withLock { $0 = file } }

    /// For a lesson that verifies the transfer itself (an upload: only the server's answer tells
    /// what arrived). When an attempt finishes, this check replaces reading `file` back, and the
    /// record and exit status keep the usual contract: both digests and byte counts equal → 0,
    /// "verified"; otherwise 65, "verification-failed". An attempt that fails is 69 as usual.
    public func verified(_ check: TransferCheck) { ownCheck.value.withLock { $0 = check } }

    /// The way chosen with `--way`, or the first. `Lesson.run` has already checked the name
    /// against the lesson's `ways`; asking with another enum than the one the lesson declared
    /// is a programming error.
    public func way<Way: LessonWay>(_: Way.Type) -> Way {
        guard let way = way.flatMap(Way.init(rawValue:)) else {
            preconditionFailure("\(Way.self) is not this lesson's ways")
        }
        return way
    }

    /// The lesson's own remarks, in place of the article's NSLog.
    public func log(_ message: String) { console.line("  " + message) }

    /// Calls `start`, then waits until the callback it was given has been called, and returns
    /// what it was called with. An app would return at once and let the handler run later; a
    /// command-line program has to wait for it.
    public func waitForCompletion<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) -> Value {
        let slot = CompletionSlot<Value>()
        start { value in
            slot.value.withLock { $0 = value }
            slot.filled.signal()
        }
        slot.filled.wait()
        return slot.value.withLock { $0! }
    }
}

final class SavedFile: Sendable {
    let url = Mutex<URL?>(nil)
}

final class OwnCheck: Sendable {
    let value = Mutex<TransferCheck?>(nil)
}

/// What a lesson checked itself (`LessonRun.verified(_:)`): what should have arrived and what did.
/// In the record, `expectedSHA256` / `resourceBytes` are the expected side, `actualSHA256` /
/// `fileBytes` what arrived.
public struct TransferCheck: Sendable, Equatable {
    public var expectedSHA256: String
    public var expectedBytes: Int64
    public var actualSHA256: String?
    public var actualBytes: Int64
    /// Names what was compared in the mismatch message, e.g. "the server received".
    public var actualSide: String

    public init(expectedSHA256: String, expectedBytes: Int64, actualSHA256: String?, actualBytes: Int64,
                actualSide: String) {
        self.expectedSHA256 = expectedSHA256
        self.expectedBytes = expectedBytes
        self.actualSHA256 = actualSHA256
        self.actualBytes = actualBytes
        self.actualSide = actualSide
    }

    var matches: Bool { actualSHA256 == expectedSHA256 && actualBytes == expectedBytes }
}

private final class CompletionSlot<Value: Sendable>: Sendable {
    let value = Mutex<Value?>(nil)
    let filled = DispatchSemaphore(value: 0)
}

/// Everything around a lesson's strategy: the command line, the server, the story of the HTTP
/// exchange, retries, verification, the summary and the JSON record. A lesson's `main.swift`
/// runs it with `run { … }` from the module EmbeddedServer, which starts the lab server.
public struct Lesson {
    /// Which program this is: the lesson itself, or a student's copy of its article variant.
    public enum Program: Sendable {
        case lesson
        /// `exercise-<id>`: the student's code, whatever `--variant` says.
        case exercise
    }

    public let id: LessonID
    public let program: Program
    /// Each way's `--way` name and its line of help, in order; empty for a lesson with one way.
    let ways: [(name: String, summary: String)]
    /// The variants that have those ways; the others have one way.
    let variantsWithWays: [Variant]

    /// The lesson `id` (its title, defaults, kind and ways are `id`'s).
    public init(_ id: LessonID, program: Program = .lesson) {
        self.id = id
        self.program = program
        ways = id.ways?.listed ?? []
        variantsWithWays = id.ways?.variants ?? []
    }

    var title: String { id.title }
    /// The strategy sends the file instead of fetching it: set by the `run` its kind calls, so an
    /// upload is an upload because its strategy is a `LessonUpload`, not because of a flag.
    private(set) var uploads = false
    var savesIntoFolder: Bool { id.kind == .downloadIntoFolder }
    var isExercise: Bool { program == .exercise }

    /// `lesson-<id>`, or `exercise-<id>` for a student's copy (`lab exercise`).
    var command: String {
        switch program {
        case .lesson: id.executable
        case .exercise: id.exerciseExecutable
        }
    }

    /// Runs the lesson against the server `startServer` starts (unless `--url` names another)
    /// and exits with an `ExitStatus`.
    public func run(startingServer startServer: @escaping () throws -> any LessonServer,
                    _ makeDownload: (LessonRun) -> any LessonDownload) -> Never {
        runAttempts(startServer) { run in makeDownload(run).downloadFile }
    }

    /// Runs a lesson written with async/await and exits with an `ExitStatus`. Each attempt runs
    /// in a Task of its own; the main thread waits for it, as a command-line program must.
    public func run(startingServer startServer: @escaping () throws -> any LessonServer,
                    _ makeDownload: (LessonRun) -> any AsyncLessonDownload) -> Never {
        runAttempts(startServer) { run in
            let download = makeDownload(run)
            return { run.waitForCompletion { done in Task { done(await download.downloadFile()) } } }
        }
    }

    /// Runs an upload lesson and exits with an `ExitStatus`: the lab generates the file of
    /// `--size` bytes that the strategy sends, and the server's answer verifies it.
    public func run(startingServer startServer: @escaping () throws -> any LessonServer,
                    _ makeUpload: (LessonRun) -> any LessonUpload) -> Never {
        var upload = self
        upload.uploads = true
        upload.runAttempts(startServer) { run in makeUpload(run).uploadFile }
    }

    private func runAttempts(_ startServer: @escaping () throws -> any LessonServer,
                             _ makeStrategy: (LessonRun) -> () -> AttemptResult) -> Never {
        // Past a file size limit (`ulimit -f`) the kernel kills a writer with SIGXFSZ, with no word
        // said. Ignored, the write fails with EFBIG instead, and the lesson reports it.
        signal(SIGXFSZ, SIG_IGN)
        let options = parseOptions()
        let console = Console(storyToStandardError: options.json, quiet: options.quiet)
        do {
            let result = try LessonProcess(lesson: self, options: options, console: console, startServer: startServer)
                .run(makeStrategy)
            exit(result.exitCode)
        } catch {
            Console.error("\(command): \(describe(error))")
            // Local file errors are DownloadErrors; anything else here means the server could
            // not be started or reached.
            exit((error as? DownloadError)?.exitStatus.rawValue ?? ExitStatus.transferFailed.rawValue)
        }
    }

    /// Parses the command line. Bad input gets one line on stderr and exit 64, not a usage dump.
    private func parseOptions() -> LessonOptions {
        do {
            var options = try LessonOptions.parse()
            try checkSource(options)
            try chooseWay(&options)
            return options
        } catch {
            LessonOptions.exitReportingOneLine(error, command: command) {
                "\(command): \(title)\n\n"
                    + LessonOptions.helpMessage().replacingOccurrences(of: "USAGE: lesson ", with: "USAGE: \(command) ")
                    + waysHelp
            }
        }
    }

    /// `--url` replaces the embedded server, so its faults and its file size go with it; an upload
    /// lesson still generates the file it sends, so `--size` keeps its meaning there.
    private func checkSource(_ options: LessonOptions) throws {
        guard options.url != nil else { return }
        if uploads, options.faults != nil {
            throw ValidationError("--faults applies to the embedded server only; drop it or drop --url")
        }
        if !uploads, options.size != nil || options.faults != nil {
            throw ValidationError("--size and --faults apply to the embedded server only; drop them or drop --url")
        }
    }

    /// Checks `--way` against this lesson's ways, and fills in the default.
    private func chooseWay(_ options: inout LessonOptions) throws {
        let names = ways.map(\.name)
        if !names.isEmpty, !variantsWithWays.contains(options.variant) {
            guard options.way == nil else {
                throw ValidationError("--way: the \(options.variant.rawValue) variant has one way; "
                                      + "the ways are the \(variantsWithWays.map(\.rawValue).joined(separator: " and ")) variant's")
            }
            return
        }
        guard let way = options.way else {
            options.way = names.first
            return
        }
        guard !names.isEmpty else { throw ValidationError("--way: this lesson shows one way only; drop --way") }
        guard names.contains(way) else {
            throw ValidationError("--way must be one of \(names.joined(separator: ", ")), got \"\(way)\"")
        }
    }

    private var waysHelp: String {
        guard !ways.isEmpty else { return "" }
        let lines = ways.enumerated().map { index, way in
            "  \(way.name.padding(toLength: 22, withPad: " ", startingAt: 0))\(way.summary)\(index == 0 ? " (default)" : "")"
        }
        let whose = variantsWithWays.count == Variant.allCases.count
            ? "" : " (the \(variantsWithWays.map(\.rawValue).joined(separator: " and ")) variant's)"
        return "\nWAYS\(whose):\n" + lines.joined(separator: "\n") + "\n"
    }
}
