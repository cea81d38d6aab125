import Foundation
import LabCatalogue
import LabFixtures
import LabHarness
import LabKit
import LabServer
import LabVocabulary

/// Runs a program (a student's exercise, or a lesson) under one trial against the lab server in
/// this process, and reports what it saw from outside: how the process ended, the file it left
/// compared byte for byte, and the server's log of what was sent and received.
struct TrialRunner {
    let server: LabServer
    let program: URL
    /// `--variant article` when a lesson itself is checked; nothing for an exercise.
    let extraArguments: [String]
    /// The lesson whose program this is: an upload lesson's trials send a file.
    let lesson: LessonID
    /// Scratch space: one folder per trial, removed afterwards.
    let workFolder: URL
    /// Every run is stopped after this long and reported as timed out.
    var timeout: Duration = Self.defaultTimeout
    static let defaultTimeout: Duration = .seconds(30)
    /// For `lab exercise see`: each command is printed before it runs, and the program's story
    /// (its stderr) goes to the terminal.
    var showing = false
    /// `Ran.exchanges` keeps the last run's exchanges, with the bytes on disk sampled: for the
    /// record of a failing check, and `lab exercise see`'s picture.
    var keepsExchanges = true
    /// For `lab exercise see`'s picture: the runs are paced, the whole file in about a quarter of a
    /// second, so that the samples of the disk show each request's effect.
    var paces = false

    struct Ran {
        var observation: Observation
        /// What a memory check measures against when this is the clean run: its peak, but never
        /// more than `baselineAboveTheLab` over what the lab held before the code ran, so code
        /// that holds memory of its own in the clean run (a ballast) raises no baseline.
        var memoryBaseline: Int64
        var seconds: Double
        /// The last run's exchanges against time, when drawing.
        var exchanges: ComparisonResults.ExchangeTimeline?
    }

    /// `cleanPeakRSS`, the clean run's peak, is given when the trial measures memory.
    private var uploads: Bool { lesson.kind == .upload }

    /// Right code's clean 1 MiB run peaks 10 to 13 MiB above what the lab held before it ran
    /// (lessons 00 to 08, measured): twice that is the most a clean run's peak counts for.
    static let baselineAboveTheLab: Int64 = 24 << 20

    func run(_ trial: Trial, cleanPeakRSS: Int64?) throws -> Ran {
        // Nothing the program can read names the check or its faults: not the URL (sealed), the
        // file's name or its folder. A program that looked for them could dodge the fault.
        let token = Self.newToken()
        let folder = workFolder.appendingPathComponent(token)
        var trial = trial
        if paces { trial.faults = trial.faults.paced(bytesPerSecond: max(trial.size * 4, 64 << 10), attempts: TransferLimits.defaultAttempts) }
        let fixture = Fixture(name: "\(token).bin", size: trial.size, content: trial.faults.content)
        defer { try? FileManager.default.removeItem(at: folder) }
        let install = try Install(output: folder.appendingPathComponent(fixture.name), temporary: folder.appendingPathComponent("tmp"))
        // A new install's folder is not inside the first one's, and says nothing of it. Its
        // TMPDIR is the first one's: on a Mac a command-line program's is the user's, shared.
        let newInstallFolder = workFolder.appendingPathComponent(Self.newToken())
        defer { try? FileManager.default.removeItem(at: newInstallFolder) }
        let newInstall = trial.sequel == .killAndRerunAsANewInstall
            ? try Install(output: newInstallFolder.appendingPathComponent(fixture.name), temporary: install.temporary) : nil

        // The rerun at another URL is another server's first request: the script, which counts
        // attempts per server, is the first run's alone. There one more attempt changes the file,
        // so that a rerun that goes back to the first URL gets another file.
        func url(on server: LabServer) -> URL {
            let faults: String? = if trial.faults.isNone { nil }
                else if trial.sequel != .killAndRerunAtAnotherURL { trial.faults.description }
                else if server === self.server { nil }
                else { FaultScript(attempts: trial.faults.attempts + [[.change]]).description }
            return uploads
                ? URL(string: server.baseURL.absoluteString + "/upload?run=\(token)")!
                : server.sealedURL(for: fixture, faults: faults, run: token)
        }
        // Sealed once: a rerun fetches the same URL, as an app that resumes does.
        let mainURL = url(on: server)
        func arguments(_ url: URL, output: URL, generation: Int, withTrialArguments: Bool) -> [String] {
            var arguments = ["--url", url.absoluteString, "--output", output.path, "--json"] + (showing ? [] : ["--quiet"])
                + extraArguments + TransferLimits.arguments(forFileOf: Catalogue.largestTrialSize, within: timeout)
            if uploads {
                arguments += ["--size", String(trial.size)]
            } else {
                arguments += ["--sha256", Fixture(name: fixture.name, size: fixture.size, generation: generation, content: fixture.content).sha256Hex()]
            }
            return arguments + trial.everyRun + (withTrialArguments ? trial.arguments : [])
        }
        func process(_ arguments: [String], in install: Install) -> MeasuredProcess {
            var process = MeasuredProcess(program: program, arguments: arguments, outputFolder: folder, timeout: timeout)
            process.environment["TMPDIR"] = install.temporary.path
            process.passesStderrThrough = showing
            if keepsExchanges { process.watchedOutput = install.output }
            // As a student pastes it: `swift run`, and each word quoted where the shell would split it.
            // The URL is this run's server, gone when `see` ends: the line says so, for whoever pastes it later.
            if showing { Console.output("$ swift run \(program.lastPathComponent) \(ShellWord.line(arguments))   # against this run's server, which ends with `see`") }
            return process
        }

        let played = try play(trial, token: token, folder: folder, install: install, rerunInstall: newInstall ?? install,
                              fixture: fixture) { server, install, generation, withTrialArguments in
            process(arguments(server === self.server ? mainURL : url(on: server), output: install.output, generation: generation,
                              withTrialArguments: withTrialArguments), in: install)
        }
        return observe(played, of: trial, token: token, output: played.install.output, fixture: fixture, cleanPeakRSS: cleanPeakRSS)
    }

    /// Twelve random hex digits: a name that says nothing.
    private static func newToken() -> String {
        String(UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12))
    }

    /// Where one install of the program keeps its files: the output path it is given, and its
    /// TMPDIR.
    private struct Install {
        let output: URL
        let temporary: URL

        init(output: URL, temporary: URL) throws {
            self.output = output
            self.temporary = temporary
            try FileManager.default.createDirectory(at: output.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        }

        /// The file under the resource's name: the output itself, or, where the program made the
        /// output a folder (lesson 05's), the file of that name in it.
        func fileUnderItsName(_ name: String) -> URL {
            var isFolder: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: output.path, isDirectory: &isFolder)
            return exists && isFolder.boolValue ? output.appendingPathComponent(name) : output
        }
    }

    /// What the run showed: how it ended, the file it left, what it asked for after the break,
    /// from its record and the server's log.
    private func observe(_ played: Played, of trial: Trial, token: String, output: URL, fixture: Fixture,
                         cleanPeakRSS: Int64?) -> Ran {
        let finished = played.finished
        let reading = LessonResult.read(standardOutput: finished.stdout)
        let record = reading.record
        let written = record.map { URL(fileURLWithPath: $0.output) } ?? output
        let log = server.requests(run: token)
        // The kernel's peak the lab measured, or the record's, which the process cannot take back.
        let peakRSS = max(finished.peakRSSBytes, record?.peakRSSBytes ?? 0)
        let ending = finished.ending(record: record, timeout: timeout)
        // The transfer that broke: the first GET of one run, the last before the rerun of two.
        let gets = log.filter { $0.method == .get }
        let broken = trial.sequel.runsTwice ? played.getsBeforeTheRerun - 1 : 0
        let afterTheBreak = gets.indices.contains(broken + 1) && broken >= 0
            ? AfterTheBreak(reached: gets[broken].reachedOffset, range: gets[broken + 1].range, status: gets[broken + 1].status) : nil

        let (file, uploadExtra) = uploads
            ? uploadedFile(in: log, size: trial.size)
            : (FileInspection.state(of: written, against: Fixture(name: fixture.name, size: fixture.size, generation: played.generation,
                                                                      content: fixture.content)), nil)
        let observation = Observation(
            ending: ending, outcome: record?.outcome, file: file, fileName: written.lastPathComponent,
            resourceName: fixture.name, size: trial.size, breakOffset: trial.faults.breakOffset(bodyLength: trial.size),
            afterTheBreak: afterTheBreak, firstEnding: played.firstEnding,
            memoryGrowth: cleanPeakRSS.map { Double(peakRSS - $0) / Double(trial.size) },
            sentHEAD: log.contains { $0.method == .head }, uploadExtraBytes: uploadExtra, progress: record?.progress,
            bytesSent: uploads ? nil : gets.reduce(0) { $0 + $1.bodyBytesSent }, requestsSent: uploads ? nil : log.count,
            background: record?.background, mostAtOnce: uploads ? nil : gets.mostSendingAtOnce,
            largestBody: uploads ? nil : gets.map(\.bodyBytesSent).max() ?? 0,
            askedBeforeRetryAfter: uploads ? nil : gets.askedAgainBeforeRetryAfter(seconds: ConnectionLimit.retryAfterSeconds),
            crowd: crowd(of: trial, token: token), keptIn: Self.folder(of: written, within: output),
            busyPageInTheFile: lesson.fetchesInSegments ? Self.holdsABusyPage(written) : nil,
            statusAnswered: Self.statusAnswered(of: trial, in: log), errorMessage: record?.error?.message,
            fileAtTheKill: played.fileAtTheKill,
            startedAProgram: played.firstStartedAProgram || record?.startedAProgram == true,
            uploadsAroundTheSession: uploads ? record.map { log.uploadsNotIn($0.requests) } ?? 0 : 0,
            recordProblem: played.firstRecordProblem ?? reading.problem)
        let exchanges = keepsExchanges ? record.map { record in
            let run = ComparisonResults.ExchangeTimeline(origin: finished.startedAt, faults: trial.faults.isNone ? "" : trial.faults.description,
                                                         exchanges: record.requests, disk: finished.disk, events: record.events, sizeBytes: trial.size)
            return played.killed.map { $0.run.followed(by: run, killedAt: $0.at) } ?? run
        } : nil
        let heldByTheLab = record?.residentBeforeTheCodeBytes ?? 0
        let baseline = heldByTheLab > 0 ? min(peakRSS, heldByTheLab + Self.baselineAboveTheLab) : peakRSS
        return Ran(observation: observation, memoryBaseline: baseline, seconds: finished.wallSeconds, exchanges: exchanges)
    }

    /// Lesson 06's crowd, from the server's log: how many of its other transfers (`companion=N`
    /// after the run's token) got the whole file, and how many a crowd has on this machine.
    private func crowd(of trial: Trial, token: String) -> (fetched: Int, wanted: Int)? {
        guard lesson == .runLoopThread, trial.arguments.contains(RunLoopThreadWay.crowd.rawValue) else { return nil }
        let marker = "run=\(token)&companion="
        let fetched = Set(server.requestLog.compactMap { request -> Substring? in
            guard request.method == .get, request.status == 200, request.bodyBytesSent == trial.size,
                  let range = request.target.range(of: marker) else { return nil }
            return request.target[range.upperBound...]
        })
        return (fetched.count, ProcessInfo.processInfo.activeProcessorCount)
    }

    /// The error status the trial's script plays, when the server answered a request with it.
    static func statusAnswered(of trial: Trial, in log: [LoggedRequest]) -> Int? {
        let played = trial.faults.attempts.joined().compactMap { fault -> Int? in
            if case .status(let code) = fault { code } else { nil }
        }
        return log.map(\.status).first { played.contains($0) }
    }

    /// The folder of `file` relative to `output`: "Library/Application Support"; nil outside it.
    static func folder(of file: URL, within output: URL) -> String? {
        let root = output.standardizedFileURL.path + "/"
        let path = file.standardizedFileURL.deletingLastPathComponent().path + "/"
        guard path.hasPrefix(root) else { return nil }
        return String(path.dropFirst(root.count).dropLast())
    }

    /// Whether the file holds the server's 503 page, read up to the largest trial's size.
    private static func holdsABusyPage(_ file: URL) -> Bool {
        guard let data = OutputFile.readBounded(file, limit: Int(Catalogue.largestTrialSize)) else { return false }
        return data.range(of: Data(ConnectionLimit.pageOpening.utf8)) != nil
    }

    private struct Played {
        /// The run to judge.
        var finished: MeasuredProcess.Finished
        /// Where it ran.
        var install: Install
        /// The generation of the file it had to end with.
        var generation: Int
        /// How the first of two runs ended.
        var firstEnding: Observation.Ending?
        /// The GETs the main server had logged before the second run began.
        var getsBeforeTheRerun = 0
        /// The first run, killed, as the server logged it, and when it was killed: drawn before
        /// the rerun.
        var killed: (run: ComparisonResults.ExchangeTimeline, at: Double)?
        /// What the file under the resource's name held at the kill.
        var fileAtTheKill: FileState?
        /// The first of two runs said its code started a program (the second's record says its own).
        var firstStartedAProgram = false
        /// What was wrong with the first of two runs' standard output, when it held no record.
        var firstRecordProblem: String?
    }

    /// Runs the program as the trial says: once, or twice (the first run killed at the stall for
    /// the kill sequels). The first run of `killAndRerunAtAnotherURL` is served by a server of its
    /// own, which answers through the rerun with its file changed; the rerun of
    /// `killAndRerunAsANewInstall` runs in `rerunInstall`.
    private func play(_ trial: Trial, token: String, folder: URL, install: Install, rerunInstall: Install, fixture: Fixture,
                      launch: (_ server: LabServer, _ install: Install, _ generation: Int, _ withTrialArguments: Bool) -> MeasuredProcess) throws -> Played {
        guard trial.sequel.runsTwice else {
            return Played(finished: try launch(server, install, trial.generation, true).run(), install: install, generation: trial.generation)
        }
        let firstServer = trial.sequel == .killAndRerunAtAnotherURL ? try LabServer.start() : server
        defer { if firstServer !== server { firstServer.stop() } }
        let first = launch(firstServer, install, 0, true)
        let before = trial.sequel.kills
            ? try first.run(killWhen: LessonRunner.killPoint(log: { firstServer.requests(run: token, method: .get) }, files: folder,
                                                             stallAttempt: trial.faults.stallToKillAt))
            : try first.run()
        let killedAtTheStall = before.signal == SIGKILL
        let killed = keepsExchanges && killedAtTheStall ? (
            run: ComparisonResults.ExchangeTimeline(killed: before, logged: firstServer.requests(run: token), server: firstServer.baseURL,
                                                    faults: trial.faults.isNone ? "" : trial.faults.description, sizeBytes: trial.size),
            at: before.startedAt + before.wallSeconds) : nil
        let fileAtTheKill = killedAtTheStall
            ? FileInspection.state(of: install.fileUnderItsName(fixture.name), against: fixture)
            : nil
        if killedAtTheStall { firstServer.endStalls(run: token) }
        if showing, killedAtTheStall { Console.output("(killed with SIGKILL: every transfer had stalled or ended, and the files held what the server had sent)") }
        let firstReading = LessonResult.read(standardOutput: before.stdout)
        let firstRecord = firstReading.record
        let firstEnding = before.ending(record: firstRecord, timeout: timeout)
        // A run that ends in a hang or a crash, or that calls a wrong file done, has failed
        // already: that run is the one to show.
        if before.timedOut || before.signal.map({ $0 != SIGKILL }) == true || firstRecord?.outcome == .verificationFailed {
            return Played(finished: before, install: install, generation: 0, fileAtTheKill: fileAtTheKill)
        }
        let getsBefore = server.requests(run: token, method: .get).count
        var finished = try launch(server, rerunInstall, trial.generation, false).run()
        finished.peakRSSBytes = max(finished.peakRSSBytes, before.peakRSSBytes)
        finished.wallSeconds += before.wallSeconds
        return Played(finished: finished, install: rerunInstall, generation: trial.generation, firstEnding: firstEnding,
                      getsBeforeTheRerun: getsBefore, killed: killed, fileAtTheKill: fileAtTheKill,
                      firstStartedAProgram: firstRecord?.startedAProgram == true, firstRecordProblem: firstReading.problem)
    }

    /// What the server stored of an upload, against the file the lesson generated and sent.
    private func uploadedFile(in log: [LoggedRequest], size: Int64) -> (FileState, extra: Int64?) {
        guard let stored = log.lazy.flatMap(\.uploadedFiles).first else { return (.missing, nil) }
        let sent = Fixture(name: lesson.executable, size: size)
        let state: FileState = stored.bytes > size ? .longer(bytes: stored.bytes)
            : stored.bytes < size ? .shorter(bytes: stored.bytes)
            : stored.sha256Hex == sent.sha256Hex() ? .right : .rightSizeWrongBytes
        return (state, stored.bytes - size)
    }
}

extension LabServer {
    /// The requests of one run token, oldest first; `method` keeps only those.
    func requests(run token: String, method: RequestMethod? = nil) -> [LoggedRequest] {
        requestLog.filter { ($0.method == method || method == nil) && $0.target.hasSuffix("run=\(token)") }
    }
}

extension LoggedRequest {
    /// The offset in the file this GET's body reached: where a 206 started, plus what was sent.
    var reachedOffset: Int64 {
        (status == 206 ? range.flatMap(RangeHeader.start(of:)) ?? 0 : 0) + bodyBytesSent
    }
}
