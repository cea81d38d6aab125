import ArgumentParser
import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabVocabulary
import Synchronization

/// One run of a lesson, from the command line to the exit status.
struct LessonProcess<Way: LessonWay & ExpressibleByArgument> {
    let lesson: Lesson<Way>
    let options: LessonOptions
    /// The way chosen; nil for a lesson, or a variant, that has one.
    let way: Way?
    let console: Console
    let startServer: () throws -> any LessonServer

    /// `makeStrategy` builds the lesson's object for this run and hands back its attempt: one
    /// press of "Start" (or "Resume").
    func run(_ makeStrategy: (LessonRun) -> () -> AttemptResult) throws -> LessonResult {
        if lesson.id.launches > 1, let launch = LaterLaunch.inThisProcess { runAsLaterLaunch(launch, makeStrategy) }
        // --max-time counts from here: starting the server and writing an upload's file count too.
        let processStarted = ContinuousClock.now
        TransferLimits.active = options.limits
        SimulatedDisk.writeDelayMicroseconds.store(options.writeDelayMicroseconds, ordering: .relaxed)
        if let capacity = options.diskFullAfter?.bytes { SimulatedDisk.capacity.store(Int(capacity), ordering: .relaxed) }
        let source = try DownloadSource(options: options, lesson: lesson, startServer: startServer)
        defer { source.server?.stop() }
        let file = try prepareOutput()
        if lesson.id.kind == .downloadIntoContainer { useTheContainersTemporaryFolder(file) }
        // Before the lesson makes its first session, which makes Foundation's folders.
        keepFoundationStores(in: try foundationStores(for: file))
        try checkArchivePath()
        let exchangeLog = HTTPExchangeLog()
        URLConnection.recordExchanges(in: exchangeLog)
        tellDownloadSessionLifecycle(to: { [console] in console.line("  " + $0) })
        announce(source, file: file, exchangeLog: exchangeLog)

        var run = LessonRun(url: source.url, faultFreeURL: source.faultFreeURL, file: file,
                            variant: options.variant, wayName: way?.rawValue, progress: ProgressBar(console: console),
                            uploadFixture: lesson.uploads ? source.fixture : nil, console: console,
                            exchangeLog: exchangeLog)
        if lesson.id.runsOnThePhone {
            let life = options.life ?? .story
            console.line("  life: \(life.events.isEmpty ? "nothing happens to the app" : life.description)")
            run.background = BackgroundRun(life: life, storyToStandardError: options.json, quiet: options.quiet,
                                           writeDelayMicroseconds: options.writeDelayMicroseconds, limits: options.limits,
                                           diskCapacity: options.diskFullAfter?.bytes,
                                           eventsDelaySeconds: options.slowEvents ? BackgroundRun.slowEventsSeconds : 0)
        }
        if let connections = options.connections { run.connections = connections }
        if lesson.id.fetchesInSegments { console.line("  connections: \(run.connections) at once") }
        if let fixture = run.uploadFixture { try write(fixture, to: file) }

        let started = Date()
        let ending = RunEnding()
        watchLimits(ending: ending, source: source, exchanges: exchangeLog, file: verifiedFile(run, file: file), started: started,
                    deadline: options.limits.maxSeconds.map { processStarted + .milliseconds(Int64($0 * 1000)) })
        ResidentPeak.noteBeforeTheCode()
        let (attempts, lastResult) = try launchUntilDone(makeStrategy, run: run, source: source, ending: ending)
        let wallSeconds = Date().timeIntervalSince(started)
        // A limit passed meanwhile ends the run from its own thread; this one waits for the exit.
        guard ending.claim() else { RunEnding.waitForTheExit() }

        var result = try ResultRecorder(
            lesson: lesson, options: options, way: way, source: source, file: verifiedFile(run, file: file)(),
            exchanges: exchangeLog, attempts: attempts, lastResult: lastResult, wallSeconds: wallSeconds,
            ownCheck: run.ownCheck.value.withLock { $0 }, progress: run.progress.record
        ).result()
        result.background = run.background?.record.withLock { $0 }
        result.residentBeforeTheCodeBytes = ResidentPeak.heldBeforeTheCode
        let events = run.events.all
        result.events = events.isEmpty ? nil : events
        // A run whose archive could not be written did not give what was asked for.
        if !report(result), result.exitCode == 0 { result.exitCode = ExitStatus.localIOFailed.rawValue }
        return result
    }

    /// The story's first lines: what runs, against what, into what; then every exchange as it happens.
    private func announce(_ source: DownloadSource, file: URL, exchangeLog: HTTPExchangeLog) {
        let variant = lesson.isExercise ? "your code" : options.variant.rawValue
        console.line("\(lesson.command): \(lesson.title) [\(variant)\(way.map { ", \($0)" } ?? "")]")
        if let server = source.server {
            let faults = source.faults.isNone ? "none" : source.faults.description
            console.line("  embedded server \(server.baseURL.absoluteString), faults \"\(faults)\"")
        }
        if lesson.uploads {
            console.line("  send \(file.path)")
            console.line("  to   POST \(ShownURL.brief(source.url))")
        } else {
            console.line("  from \(ShownURL.brief(source.url))")
            console.line("  to   \(file.path)")
        }
        if let capacity = options.diskFullAfter?.bytes {
            console.line("  simulated disk: full after \(ByteFormat.grouped(capacity)) bytes")
        }
        if options.writeDelayMicroseconds > 0 { console.line("  simulated disk: \(options.writeDelayMicroseconds) µs per write") }
        exchangeLog.observe { [console] event in
            if let line = ExchangeStory.line(for: event) { console.line(line) }
        }
    }

    /// The upload's file, written and its digest computed (and kept) before the clock starts: the
    /// time is the upload's, not the file's making, nor the check of the server's answer.
    private func write(_ fixture: Fixture, to file: URL) throws {
        do {
            try fixture.write(to: file)
        } catch {
            throw DownloadError.localIO(path: file.path, reason: "\(error)")
        }
        _ = fixture.sha256Hex()
    }

    /// Launches the app `LessonID.launches` times, each with a strategy object of its own that
    /// finds only what the last launch left on disk; a launch that fails ends the run.
    private func launchUntilDone(_ makeStrategy: (LessonRun) -> () -> AttemptResult, run: LessonRun, source: DownloadSource,
                                 ending: RunEnding) throws -> (attempts: Int, last: AttemptResult) {
        var attempts = 0
        var lastResult = AttemptResult.finished
        for launch in 1...lesson.id.launches {
            guard case .finished = lastResult else { break }
            guard launch > 1 else {
                (attempts, lastResult) = attemptUntilDone(makeStrategy(run), run: run, url: source.url, ending: ending, before: attempts)
                continue
            }
            console.line("↻ launch \(launch): the app starts again, in a new process"
                         + (options.purgeCaches ? ", after the system emptied Library/Caches and tmp" : ""))
            run.events.note("launch \(launch)" + (options.purgeCaches ? ", Caches and tmp emptied" : ""))
            if options.purgeCaches { try purgeCaches(in: run.file) }
            (attempts, lastResult) = try launchInAProcessOfItsOwn(launch, run: run, before: attempts)
        }
        return (attempts, lastResult)
    }

    /// What iOS does when storage runs low: everything in the app's Library/Caches and tmp goes.
    private func purgeCaches(in container: URL) throws {
        for purged in AppContainer.purgedWhenStorageRunsLow {
            let folder = container.appendingPathComponent(purged, isDirectory: true)
            do {
                for item in try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil) {
                    try FileManager.default.removeItem(at: item)
                }
            } catch {
                throw DownloadError.localIO(path: folder.path, reason: "cannot empty it: \(error.localizedDescription)")
            }
        }
    }

    /// Presses Start, then Resume after each resumable failure, up to `--max-attempts` in one
    /// launch; `before` attempts were made by the launches before it.
    func attemptUntilDone(_ attempt: () -> AttemptResult, run: LessonRun, url: URL,
                          ending: RunEnding, before: Int) -> (attempts: Int, last: AttemptResult) {
        let log = run.exchangeLog
        var attempts = before
        var lastResult = AttemptResult.finished
        repeat {
            attempts += 1
            ending.attemptsMade.store(attempts, ordering: .relaxed)
            // On the phone (09) an attempt is a launch by the user: the app's life, not a Resume button.
            if attempts > before + 1 {
                let press = lesson.id.runsOnThePhone ? "the user taps Start again" : "Resume"
                console.line("↻ attempt \(attempts): " + press)
                run.events.note(lesson.id.runsOnThePhone ? "Start again" : "Resume")
            }
            run.progress.beginAttempt()
            let (receivedBefore, exchangesBefore) = (log.bodyBytesReceived, log.exchanges.count)
            let fileBytesBefore = PartialFile.size(of: run.file)
            lastResult = attempt()
            let fileGrowth = PartialFile.size(of: run.file) - fileBytesBefore
            if fileGrowth > 0, !lesson.uploads, !log.exchanges.dropFirst(exchangesBefore).contains(where: { $0.method == .get }) {
                // A call such as Data(contentsOf:) shows the lab no request or response; what
                // landed in the file is all there is to count.
                log.unobserved(url: url, bodyBytes: fileGrowth)
            }
            if case .failed(let error) = lastResult {
                let received = log.bodyBytesReceived - receivedBefore
                console.line("✗ attempt \(attempts) failed after \(ByteFormat.iec(received)): \(describe(error))")
            }
        } while lastResult.isResumable && attempts - before < options.maxAttempts
        return (attempts, lastResult)
    }

    /// The file the record describes. A lesson that saves into a folder names its file itself;
    /// nothing saved, nothing to verify.
    private func verifiedFile(_ run: LessonRun, file: URL) -> @Sendable () -> URL {
        let (savesIntoFolder, savedFile) = (lesson.savesIntoFolder, run.savedFile)
        return { savesIntoFolder ? savedFile.url.withLock { $0 } ?? file.appendingPathComponent("(nothing saved)") : file }
    }

    /// Ends the run early when `--max-time` (at `deadline`) or `--max-filesize` is passed, from the
    /// thread that noticed, whatever the lesson's code is doing: the run's record, with the limit
    /// as its error, is reported as usual before the process exits with its status.
    private func watchLimits(ending: RunEnding, source: DownloadSource, exchanges: HTTPExchangeLog,
                             file: @escaping @Sendable () -> URL, started: Date,
                             deadline: ContinuousClock.Instant?) {
        let limits = options.limits
        // nonisolated(unsafe): the record reads the lesson and the options, which no thread
        // changes once the run has started.
        nonisolated(unsafe) let process = self
        let endEarly: @Sendable (DownloadError) -> Void = { error in
            guard ending.claim() else { return }
            if let launch = LaterLaunch.running.withLock({ $0 }) { kill(launch, SIGKILL) }
            do {
                let result = try ResultRecorder(
                    lesson: process.lesson, options: process.options, way: process.way, source: source, file: file(),
                    exchanges: exchanges, attempts: max(1, ending.attemptsMade.load(ordering: .relaxed)), lastResult: .failed(error),
                    wallSeconds: Date().timeIntervalSince(started), ownCheck: nil, hashesTheFixture: false
                ).result()
                _ = process.report(result)
                exit(result.exitCode)
            } catch {
                Console.error("\(process.lesson.command): \(describe(error))")
                exit(ExitStatus.transferFailed.rawValue)
            }
        }
        if limits.maxFileSize != nil {
            exchanges.watchLimits { exchange in
                if let error = limits.passed(by: exchange) { endEarly(error) }
            }
        }
        if let maxSeconds = limits.maxSeconds, let deadline {
            // A thread of its own: a lesson may keep every thread of GCD's pool busy (06's crowd).
            Thread {
                let left = ContinuousClock.now.duration(to: deadline)
                if left > .zero { Thread.sleep(forTimeInterval: left.seconds) }
                endEarly(.tookTooLong(maxSeconds: maxSeconds))
            }.start()
        }
    }

    /// Prints the record and the summary, and writes `--har`; false when the archive could not be written.
    @discardableResult
    private func report(_ result: LessonResult) -> Bool {
        if options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            if let data = try? encoder.encode(result), let text = String(data: data, encoding: .utf8) {
                Console.output(text)
            }
        }
        let archived = writeArchive(of: result)
        for line in ExchangeStory.summary(result) { console.line(line) }
        if result.exitCode != 0, let message = result.error?.message {
            Console.error("\(lesson.command): \(message)")
        }
        // Exit 0 promises a finished download; only this line, even under --quiet, and the
        // record's "outcome" say that nothing vouched for its bytes.
        if result.outcome == .unverified {
            Console.error("\(lesson.command): warning: \(result.output) was downloaded but NOT verified: "
                          + "no SHA-256 was known (pass --sha256, or use a server that sends Repr-Digest)")
        }
        return archived
    }
}

/// Where the bytes come from: the embedded server (started here) or a URL given on the command line.
struct DownloadSource {
    let url: URL
    /// The same resource with no faults, for side demonstrations that must not use up the
    /// attempts the fault script counts. For a URL from the command line, that URL.
    let faultFreeURL: URL
    let server: (any LessonServer)?
    let fixture: Fixture?
    /// The embedded server's faults; `.none` for a clean run or another server.
    let faults: FaultScript
    /// This process's attempt counter on the embedded server.
    private var runToken = ""

    /// The embedded server's file as this run's requests last saw it: after a `change` in the
    /// script, its new generation. nil for another server.
    var fixtureNow: Fixture? {
        guard let fixture, let server else { return fixture }
        let generation = faults.generation(forAttempt: server.attemptSeen(run: runToken))
        return Fixture(name: fixture.name, size: fixture.size, generation: generation, content: fixture.content)
    }

    init<Way>(options: LessonOptions, lesson: Lesson<Way>, startServer: () throws -> any LessonServer) throws {
        let script = options.faults ?? lesson.id.defaultFaults
        let fixture = Fixture(name: lesson.id.executable, size: options.size?.bytes ?? lesson.id.defaultSize, content: script.content)
        if lesson.uploads {
            // The file to send is generated here; the server is where it goes.
            let server = options.url == nil ? try startServer() : nil
            url = options.url.map { URL(string: $0)! } ?? server!.baseURL.appendingPathComponent("upload")
            faultFreeURL = url
            self.server = server
            self.fixture = fixture
            faults = .none
            return
        }
        if let url = options.url {
            self.url = URL(string: url)!
            faultFreeURL = self.url
            server = nil
            self.fixture = nil
            faults = .none
            return
        }
        let server = try startServer()
        // A fresh run token gives this process its own attempt counter on the server.
        let run = String(UInt32.random(in: .min ... .max), radix: 16)
        self.url = server.url(for: fixture, faults: script, run: run)
        faultFreeURL = server.url(for: fixture, faults: .none, run: run + "-fault-free")
        self.server = server
        self.fixture = fixture
        self.faults = script
        runToken = run
    }
}

/// Who ends the run: the attempt loop when it is done, or a limit passed on another thread.
/// Whoever claims it first reports and exits; the other stands aside.
final class RunEnding: Sendable {
    private let claimed = Mutex(false)
    /// Attempts started so far, for the record of a run that ends early.
    let attemptsMade = Atomic(0)

    /// True for the first caller only.
    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }

    /// For the thread that lost the claim: the winner is about to exit the process.
    static func waitForTheExit() -> Never {
        while true { Thread.sleep(forTimeInterval: 60) }
    }
}
