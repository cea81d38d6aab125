import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// A later launch of the app (lesson 10's second) runs in a process of its own, as an app's does:
/// what the first launch kept only in memory is gone. The first launch's process starts it with
/// the same command line and a `LaterLaunch` in its environment; it makes one launch against the
/// first's server and container, tells its story on the same terminal, and writes what the run's
/// record needs into a report that the first reads back.
struct LaterLaunch: Codable {
    var number: Int
    var url: URL
    var faultFreeURL: URL
    var container: URL
    var attemptsBefore: Int
    var report: URL

    static let environmentKey = "DOWNLOAD_LAB_LATER_LAUNCH"

    /// The launch this process is, when it is a later one. Its report goes into the lab's own
    /// folder, never elsewhere, whatever the environment says.
    static var inThisProcess: LaterLaunch? {
        guard let launch = ProcessInfo.processInfo.environment[environmentKey]
            .flatMap({ try? JSONDecoder().decode(LaterLaunch.self, from: Data($0.utf8)) }) else { return nil }
        let ownFolder = LabFolders.mine.standardizedFileURL.path + "/"
        return launch.report.standardizedFileURL.path.hasPrefix(ownFolder) && !launch.report.path.contains("/../") ? launch : nil
    }

    /// What the first launch's record needs of a later one.
    struct Report: Codable {
        var attempts: Int
        var exchanges: [HTTPExchange]
        var failure: RelayedFailure?
        var savedFile: String?
        var bytesWritten: Int
        var startedAProgram: Bool
    }
}

/// A later launch's failure, as the first launch's record tells it.
struct RelayedFailure: RelayedError, Codable, CustomStringConvertible {
    var record: LessonResult.ErrorRecord
    var status: Int32
    var resumable: Bool

    var description: String { record.message }
    var exitStatus: ExitStatus { ExitStatus(rawValue: status) ?? .transferFailed }
    var isResumable: Bool { resumable }
}

extension LessonProcess {
    /// The app's `number`th launch, in a child process of this program; its story goes to the
    /// same terminal. A launch that crashed ends this process with the same signal, as the app
    /// would have died.
    func launchInAProcessOfItsOwn(_ number: Int, run: LessonRun, before attempts: Int) throws -> (attempts: Int, last: AttemptResult) {
        let folder = try LabFolders.forThisRun("launches-" + lesson.command)
        LabFolders.removeAtExit(folder)
        let report = folder.appendingPathComponent("launch-\(number).json")
        let launch = LaterLaunch(number: number, url: run.url, faultFreeURL: run.faultFreeURL, container: run.file,
                                 attemptsBefore: attempts, report: report)
        guard let program = Bundle.main.executableURL else {
            throw DownloadError.localIO(path: CommandLine.arguments[0], reason: "cannot find this program to launch the app again")
        }
        let child = Process()
        child.executableURL = program
        child.arguments = Array(CommandLine.arguments.dropFirst())
        var environment = ProcessInfo.processInfo.environment
        environment[LaterLaunch.environmentKey] = String(decoding: try JSONEncoder().encode(launch), as: UTF8.self)
        environment["TMPDIR"] = run.file.appendingPathComponent(AppContainer.tmp, isDirectory: true).path
        child.environment = environment
        // Its end of this pipe reads end-of-file once this process is gone, killed or not: the
        // launch then ends too, and never outlives the run.
        let lifeline = Pipe()
        child.standardInput = lifeline
        ProgramsStarted.beforeTheLabStartsAProcess()
        do {
            try child.run()
        } catch {
            throw DownloadError.localIO(path: program.path, reason: "cannot launch the app again: \(describe(error))")
        }
        LaterLaunch.running.withLock { $0 = child.processIdentifier }
        child.waitUntilExit()
        LaterLaunch.running.withLock { $0 = nil }
        if child.terminationReason == .uncaughtSignal {
            signal(child.terminationStatus, SIG_DFL)
            kill(getpid(), child.terminationStatus)
        }
        guard let data = try? Data(contentsOf: report), let told = try? JSONDecoder().decode(LaterLaunch.Report.self, from: data) else {
            throw DownloadError.misuse("launch \(number) ended with exit \(child.terminationStatus) before it could say how it went")
        }
        ProgramsStarted.note(startedElsewhere: told.startedAProgram)
        run.exchangeLog.adopt(told.exchanges)
        if let saved = told.savedFile { run.saved(URL(fileURLWithPath: saved)) }
        SimulatedDisk.bytesWritten.add(told.bytesWritten, ordering: .relaxed)
        return (told.attempts, told.failure.map { .failed($0) } ?? .finished)
    }

    /// This process is a later launch: one launch, its report written, and the exit.
    func runAsLaterLaunch(_ launch: LaterLaunch, _ makeStrategy: (LessonRun) -> () -> AttemptResult) -> Never {
        LaterLaunch.endWithTheFirstLaunch()
        TransferLimits.active = options.limits
        SimulatedDisk.writeDelayMicroseconds.store(options.writeDelayMicroseconds, ordering: .relaxed)
        if let capacity = options.diskFullAfter?.bytes { SimulatedDisk.capacity.store(Int(capacity), ordering: .relaxed) }
        let exchangeLog = HTTPExchangeLog()
        URLConnection.recordExchanges(in: exchangeLog)
        tellDownloadSessionLifecycle(to: { [console] in console.line("  " + $0) })
        exchangeLog.observe { [console] event in
            if let line = ExchangeStory.line(for: event) { console.line(line) }
        }
        var told = LaterLaunch.Report(attempts: launch.attemptsBefore, exchanges: [], failure: nil, savedFile: nil, bytesWritten: 0,
                                        startedAProgram: false)
        do {
            keepFoundationStores(in: try foundationStores(for: launch.container))
            var run = LessonRun(url: launch.url, faultFreeURL: launch.faultFreeURL, file: launch.container, variant: options.variant,
                                wayName: way?.rawValue, progress: ProgressBar(console: console), uploadFixture: nil, console: console,
                                exchangeLog: exchangeLog)
            if let connections = options.connections { run.connections = connections }
            let (attempts, last) = attemptUntilDone(makeStrategy(run), run: run, url: launch.url, ending: RunEnding(), before: launch.attemptsBefore)
            told.attempts = attempts
            if case .failed(let error) = last { told.failure = RelayedFailure(error) }
            told.savedFile = run.savedFile.url.withLock { $0 }?.path
        } catch {
            told.failure = RelayedFailure(error)
        }
        told.exchanges = exchangeLog.exchanges
        told.bytesWritten = SimulatedDisk.bytesWritten.load(ordering: .relaxed)
        told.startedAProgram = ProgramsStarted.byTheCode
        do {
            try JSONEncoder().encode(told).write(to: launch.report)
        } catch {
            Console.error("\(lesson.command): cannot tell the first launch how launch \(launch.number) went: \(describe(error))")
            exit(ExitStatus.localIOFailed.rawValue)
        }
        exit(0)
    }
}

extension LessonProcess {
    /// An app's temporary folder is its container's tmp, which iOS empties as it likes: what a
    /// launch keeps in `FileManager.default.temporaryDirectory` is there, and goes with it. The
    /// lab's own folders were found before, under the temporary folder the run was given.
    func useTheContainersTemporaryFolder(_ container: URL) {
        setenv(LabFolders.runsTemporaryFolder, LabFolders.mine.deletingLastPathComponent().path, 1)
        setenv("TMPDIR", container.appendingPathComponent(AppContainer.tmp, isDirectory: true).path, 1)
    }
}

extension RelayedFailure {
    init(_ error: any Error) {
        self.init(record: LessonResult.ErrorRecord(error), status: LabKit.exitStatus(for: error).rawValue,
                  resumable: AttemptResult.failed(error).isResumable)
    }
}

extension LaterLaunch {
    /// The later launch's process, while it runs: a run that ends early kills it first.
    static let running = Mutex<pid_t?>(nil)

    /// Ends this process when its standard input ends: the first launch's process has gone.
    static func endWithTheFirstLaunch() {
        Thread.detachNewThread {
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) > 0 {}
            _exit(ExitStatus.transferFailed.rawValue)
        }
    }
}
