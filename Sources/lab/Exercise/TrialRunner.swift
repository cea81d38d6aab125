import Foundation
import LabCatalogue
import LabFixtures
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

    struct Ran {
        var observation: Observation
        var peakRSSBytes: Int64
        var seconds: Double
    }

    /// `cleanPeakRSS`, the clean run's peak, is given when the trial measures memory.
    private var uploads: Bool { lesson.kind == .upload }

    func run(_ trial: Trial, name: String, cleanPeakRSS: Int64?) throws -> Ran {
        let folder = workFolder.appendingPathComponent(name)
        try? FileManager.default.removeItem(at: folder)
        let temporary = folder.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let token = "exercise-\(name)-\(UUID().uuidString.prefix(8))"
        let fixture = Fixture(name: "\(name).bin", size: trial.size)
        let url = uploads
            ? URL(string: server.baseURL.absoluteString + "/upload?run=\(token)")!
            : server.url(for: fixture, faults: trial.faults.isNone ? nil : trial.faults.description, run: token)
        let output = folder.appendingPathComponent(fixture.name)
        func arguments(generation: Int, withTrialArguments: Bool) -> [String] {
            var arguments = ["--url", url.absoluteString, "--output", output.path, "--json", "--quiet"] + extraArguments
                + TransferLimits.arguments(forFileOf: trial.size, within: timeout)
            if uploads {
                arguments += ["--size", String(trial.size)]
            } else {
                arguments += ["--sha256", Fixture(name: fixture.name, size: fixture.size, generation: generation).sha256Hex()]
            }
            return arguments + (withTrialArguments ? trial.arguments : [])
        }
        func process(_ arguments: [String]) -> MeasuredProcess {
            var process = MeasuredProcess(program: program, arguments: arguments, outputFolder: folder, timeout: timeout)
            process.environment["TMPDIR"] = temporary.path
            return process
        }

        let (finished, generation) = try play(trial, token: token, folder: folder) { generation, withTrialArguments in
            process(arguments(generation: generation, withTrialArguments: withTrialArguments))
        }

        let record = try? JSONDecoder().decode(LessonResult.self, from: Data(finished.stdout.utf8))
        let written = record.map { URL(fileURLWithPath: $0.output) } ?? output
        let log = server.requests(run: token)
        let sent = log.reduce(Int64(0)) { $0 + $1.bodyBytesSent }
        let ending = finished.ending(record: record, timeout: timeout)

        let (file, uploadExtra) = uploads
            ? uploadedFile(in: log, size: trial.size)
            : (FileInspection.state(of: written, against: Fixture(name: fixture.name, size: fixture.size, generation: generation)), nil)
        let observation = Observation(
            ending: ending, outcome: record?.outcome, file: file, fileName: written.lastPathComponent,
            resourceName: fixture.name, size: trial.size, breakOffset: trial.faults.breakOffset(bodyLength: trial.size),
            downloadedAgainShare: uploads ? 0 : Double(max(0, sent - trial.size)) / Double(trial.size),
            memoryGrowth: cleanPeakRSS.map { Double(finished.peakRSSBytes - $0) / Double(trial.size) },
            sentHEAD: log.contains { $0.method == .head }, uploadExtraBytes: uploadExtra)
        return Ran(observation: observation, peakRSSBytes: finished.peakRSSBytes, seconds: finished.wallSeconds)
    }

    /// Runs the program as the trial says: once, or twice with the same output path (the first
    /// run killed at the stall for `killAndRerun`). Returns the run to judge and the generation of
    /// the file it had to end with.
    private func play(_ trial: Trial, token: String, folder: URL,
                      launch: (_ generation: Int, _ withTrialArguments: Bool) -> MeasuredProcess) throws
        -> (MeasuredProcess.Finished, generation: Int) {
        switch trial.sequel {
        case .none:
            return (try launch(trial.generation, true).run(), trial.generation)
        case .rerun, .killAndRerun:
            let first = launch(0, true)
            let before = trial.sequel == .killAndRerun
                ? try first.run(killWhen: LessonRunner.killPoint(stalled: { server.hasStalled(run: token) }, files: folder))
                : try first.run()
            let firstRecord = try? JSONDecoder().decode(LessonResult.self, from: Data(before.stdout.utf8))
            // A run that ends in a hang or a crash, or that calls a wrong file done, has failed
            // already: that run is the one to show.
            if before.timedOut || before.signal.map({ $0 != SIGKILL }) == true || firstRecord?.outcome == .verificationFailed {
                return (before, 0)
            }
            var finished = try launch(trial.generation, false).run()
            finished.peakRSSBytes = max(finished.peakRSSBytes, before.peakRSSBytes)
            finished.wallSeconds += before.wallSeconds
            return (finished, trial.generation)
        }
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

    /// Whether a GET of one run token has stopped at its stall.
    func hasStalled(run token: String) -> Bool {
        requests(run: token, method: .get).contains(where: \.stalled)
    }
}
