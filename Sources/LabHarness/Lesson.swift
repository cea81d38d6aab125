import ArgumentParser
import CoreFoundation
import Foundation
import LabKit
import LabVocabulary
import Synchronization

extension LessonRun {
    /// Calls `start`, then runs this thread's run loop until the callback it was given has been
    /// called, and returns what it was called with. This is the harness's one wait: an app would
    /// return at once and let the handler run later; a command-line program has to wait for it.
    /// Callbacks scheduled on this run loop (a connection started here) run meanwhile.
    public func waitForCompletion<Value: Sendable>(_ start: (@escaping @Sendable (Value) -> Void) -> Void) -> Value {
        let slot = CompletionSlot<Value>(waking: CFRunLoopGetCurrent())
        // With no source of its own, a run loop returns at once: a timer keeps it asleep instead.
        let keepAsleep = Timer(timeInterval: 3600, repeats: true) { _ in }
        RunLoop.current.add(keepAsleep, forMode: .default)
        defer { keepAsleep.invalidate() }
        start { value in slot.fill(value) }
        while true {
            if let value = slot.value.withLock({ $0 }) { return value }
            _ = RunLoop.current.run(mode: .default, before: .distantFuture)
        }
    }
}

private final class CompletionSlot<Value: Sendable>: @unchecked Sendable {
    // @unchecked: CFRunLoop is not marked Sendable, yet Core Foundation's run loop functions may
    // be called from any thread (Apple's Threading Programming Guide, "Thread Safety and Run Loop Objects").
    let value = Mutex<Value?>(nil)
    private let runLoop: CFRunLoop

    init(waking runLoop: CFRunLoop) { self.runLoop = runLoop }

    /// Keeps the first value, and stops the waiting run loop so that it looks. A stop that comes
    /// before the loop runs makes its next run return at once, so no wake-up is lost.
    func fill(_ newValue: Value) {
        value.withLock { $0 = $0 ?? newValue }
        CFRunLoopStop(runLoop)
    }
}

/// Which program runs a lesson's code: the lesson itself, or a student's copy of its article
/// variant.
public enum LessonProgram: Sendable {
    case lesson
    /// `exercise-<id>`: the student's code, whatever `--variant` says.
    case exercise
}

/// The way of a lesson that shows one: its code is handed none, and `--way` is not an option.
public enum OneWay: String, LessonWay, ExpressibleByArgument {
    case only

    public var summary: String { "the lesson's only way" }
}

extension SmallFileWay: ExpressibleByArgument {}
extension RunLoopThreadWay: ExpressibleByArgument {}
extension MultipartUploadWay: ExpressibleByArgument {}
extension AsyncAwaitWay: ExpressibleByArgument {}

/// Everything around a lesson's strategy: the command line, the server, the story of the HTTP
/// exchange, retries, verification, the summary and the JSON record. A lesson's `main.swift`
/// runs it with `run { … }` from the module EmbeddedServer, which starts the lab server.
///
/// `Way` is the enum of the lesson's ways (`LessonID.ways`), parsed from `--way`; the strategy is
/// made from the run and the way chosen. A lesson with one way is a `Lesson<OneWay>`.
public struct Lesson<Way: LessonWay & ExpressibleByArgument> {
    public let id: LessonID
    public let program: LessonProgram

    /// A lesson that shows several ways: `ways` is the enum `id.ways` names.
    public init(_ id: LessonID, ways: Way.Type, program: LessonProgram = .lesson) {
        precondition(id.ways.map(ObjectIdentifier.init) == ObjectIdentifier(Way.self), "\(Way.self) are not the ways of \(id.executable)")
        self.id = id
        self.program = program
    }

    var title: String { id.title }
    /// The strategy sends the file instead of fetching it: set by the `run` its kind calls, so an
    /// upload is an upload because its strategy is a `LessonUpload`, not because of a flag.
    private(set) var uploads = false
    var savesIntoFolder: Bool { id.kind == .downloadIntoFolder || id.kind == .downloadIntoContainer }
    var isExercise: Bool { program == .exercise }

    /// `lesson-<id>`, or `exercise-<id>` for a student's copy (`lab exercise`).
    package var command: String {
        switch program {
        case .lesson: id.executable
        case .exercise: id.exerciseExecutable
        }
    }

    /// Runs the lesson against the server `startServer` starts (unless `--url` names another)
    /// and exits with an `ExitStatus`. A variant that has no ways is handed the first, unused.
    public func run(startingServer startServer: @escaping () throws -> any LessonServer,
                    _ makeDownload: (LessonRun, Way) -> any LessonDownload) -> Never {
        runAttempts(startServer) { run, way in
            let download = makeDownload(run, way)
            return { run.waitForCompletion { done in download.downloadFile(completion: done) } }
        }
    }

    /// Runs a lesson written with async/await and exits with an `ExitStatus`. Each attempt runs
    /// in a Task of its own; the main thread waits for it, as a command-line program must.
    public func run(startingServer startServer: @escaping () throws -> any LessonServer,
                    _ makeDownload: (LessonRun, Way) -> any AsyncLessonDownload) -> Never {
        runAttempts(startServer) { run, way in
            let download = makeDownload(run, way)
            return { run.waitForCompletion { done in Task { done(await download.downloadFile()) } } }
        }
    }

    /// Runs an upload lesson and exits with an `ExitStatus`: the lab generates the file of
    /// `--size` bytes that the strategy sends, and the server's answer verifies it.
    public func run(startingServer startServer: @escaping () throws -> any LessonServer,
                    _ makeUpload: (LessonRun, Way) -> any LessonUpload) -> Never {
        var upload = self
        upload.uploads = true
        upload.runAttempts(startServer) { run, way in
            let strategy = makeUpload(run, way)
            return { run.waitForCompletion { done in strategy.uploadFile(completion: done) } }
        }
    }

    package func runAttempts(_ startServer: @escaping () throws -> any LessonServer,
                             _ makeStrategy: (LessonRun, Way) -> () -> AttemptResult) -> Never {
        // Past a file size limit (`ulimit -f`) the kernel kills a writer with SIGXFSZ, with no word
        // said. Ignored, the write fails with EFBIG instead, and the lesson reports it.
        signal(SIGXFSZ, SIG_IGN)
        let (options, way) = parseOptions()
        let console = Console(storyToStandardError: options.json, quiet: options.quiet)
        do {
            let result = try LessonProcess(lesson: self, options: options, way: way, console: console, startServer: startServer)
                .run { run in makeStrategy(run, way ?? Way.allCases.first!) }
            exit(result.exitCode)
        } catch {
            Console.error("\(command): \(describe(error))")
            // A local file error is an I/O failure; anything else here means the server could not
            // be started or reached.
            exit(exitStatus(for: error).rawValue)
        }
    }

    /// Parses the command line, and `--way` as `Way` where the lesson has several. Bad input gets
    /// one line on stderr and exit 64, not a usage dump.
    private func parseOptions() -> (LessonOptions, Way?) {
        do {
            let options: LessonOptions, way: Way?
            if Way.self == OneWay.self {
                (options, way) = (try LessonOptions.parse(), nil)
            } else {
                let commandLine = try LessonCommandLine<Way>.parse()
                (options, way) = (commandLine.options, try chooseWay(commandLine.way, for: commandLine.options.variant))
            }
            try checkSource(options)
            if options.life != nil, !id.runsOnThePhone {
                throw ValidationError("--life is lesson 09's: it scripts what happens to the app")
            }
            if options.slowEvents, !id.runsOnThePhone {
                throw ValidationError("--slow-events is lesson 09's: it holds back a launch's background events")
            }
            if options.purgeCaches, id.launches < 2 {
                throw ValidationError("--purge-caches is lesson 10's: it empties Library/Caches between its two launches")
            }
            if let connections = options.connections {
                guard id.fetchesInSegments else {
                    throw ValidationError("--connections is lesson 11's: it splits the file over that many connections")
                }
                guard LessonRun.connectionRange.contains(connections) else {
                    throw ValidationError("--connections must be from \(LessonRun.connectionRange.lowerBound) to \(LessonRun.connectionRange.upperBound), got \(connections)")
                }
            }
            return (options, way)
        } catch {
            LessonOptions.exitReportingOneLine(error, command: command) {
                let help = Way.self == OneWay.self ? LessonOptions.helpMessage() : LessonCommandLine<Way>.helpMessage()
                return "\(command): \(title)\n\n"
                    + help.replacingOccurrences(of: "USAGE: lesson ", with: "USAGE: \(command) ")
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

    /// The way for `variant`: the one asked for, or the first; nil for a variant with one way.
    private func chooseWay(_ asked: Way?, for variant: Variant) throws -> Way? {
        guard Way.variants.contains(variant) else {
            guard asked == nil else {
                throw ValidationError("--way: the \(variant.rawValue) variant has one way; "
                                      + "the ways are the \(Way.variants.map(\.rawValue).joined(separator: " and ")) variant's")
            }
            return nil
        }
        return asked ?? Way.allCases.first
    }

    private var waysHelp: String {
        guard Way.self != OneWay.self else { return "" }
        let lines = Way.listed.enumerated().map { index, way in
            "  \(way.name.padding(toLength: 22, withPad: " ", startingAt: 0))\(way.summary)\(index == 0 ? " (default)" : "")"
        }
        let whose = Way.variants.count == Variant.allCases.count
            ? "" : " (the \(Way.variants.map(\.rawValue).joined(separator: " and ")) variant's)"
        return "\nWAYS\(whose):\n" + lines.joined(separator: "\n") + "\n"
    }
}

extension Lesson where Way == OneWay {
    /// A lesson that shows one way.
    public init(_ id: LessonID, program: LessonProgram = .lesson) {
        precondition(id.ways == nil, "\(id.executable) shows several ways: pass them with ways:")
        self.id = id
        self.program = program
    }
}

/// The command line of a lesson that shows several ways: the options every lesson shares, and
/// `--way`, parsed as the lesson's own enum.
struct LessonCommandLine<Way: LessonWay & ExpressibleByArgument>: ParsableArguments {
    @OptionGroup var options: LessonOptions

    @Option(help: "Which way to show (default: the first); WAYS below says what each does.")
    var way: Way?
}
