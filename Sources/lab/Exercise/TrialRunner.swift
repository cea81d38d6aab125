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
            : server.url(for: fixture, faults: trial.faults.isEmpty ? nil : trial.faults, run: token)
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

        var finished: MeasuredProcess.Finished
        // The generation the judged run had to end with: the first run's is 0.
        var generation = trial.generation
        switch trial.sequel {
        case .none:
            finished = try process(arguments(generation: trial.generation, withTrialArguments: true)).run()
        case .rerun, .killAndRerun:
            let first = process(arguments(generation: 0, withTrialArguments: true))
            let before = trial.sequel == .killAndRerun
                ? try first.run(killWhen: LessonRunner.killPoint(stallPoint: Self.breakOffset(of: trial) ?? 0,
                                                                 sent: { server.bodyBytesSent(run: token) }, files: folder))
                : try first.run()
            let firstRecord = try? JSONDecoder().decode(LessonResult.self, from: Data(before.stdout.utf8))
            // A run that ends in a hang or a crash, or that calls a wrong file done, has failed
            // already: that run is the one to show.
            if before.timedOut || before.signal.map({ $0 != SIGKILL }) == true || firstRecord?.outcome == .verificationFailed {
                finished = before
                generation = 0
            } else {
                finished = try process(arguments(generation: trial.generation, withTrialArguments: false)).run()
                finished.peakRSSBytes = max(finished.peakRSSBytes, before.peakRSSBytes)
                finished.wallSeconds += before.wallSeconds
            }
        }

        let record = try? JSONDecoder().decode(LessonResult.self, from: Data(finished.stdout.utf8))
        let written = record.map { URL(fileURLWithPath: $0.output) } ?? output
        let log = server.requests(run: token)
        let sent = log.reduce(Int64(0)) { $0 + $1.bodyBytesSent }
        let ending = finished.ending(record: record, timeout: timeout)

        var file: FileState
        var uploadExtra: Int64?
        if uploads {
            let sentFile = Fixture(name: lesson.executable, size: trial.size)
            if let stored = log.lazy.flatMap(\.uploadedFiles).first {
                uploadExtra = stored.bytes - trial.size
                file = stored.bytes > trial.size ? .longer(bytes: stored.bytes)
                    : stored.bytes < trial.size ? .shorter(bytes: stored.bytes)
                    : stored.sha256Hex == sentFile.sha256Hex() ? .right : .rightSizeWrongBytes
            } else {
                file = .missing
            }
        } else {
            file = FileInspection.state(of: written, against: Fixture(name: fixture.name, size: fixture.size, generation: generation))
        }
        let observation = Observation(
            ending: ending, outcome: record?.outcome, file: file, fileName: written.lastPathComponent,
            resourceName: fixture.name, size: trial.size, breakOffset: Self.breakOffset(of: trial),
            downloadedAgainShare: uploads ? 0 : Double(max(0, sent - trial.size)) / Double(trial.size),
            memoryGrowth: cleanPeakRSS.map { Double(finished.peakRSSBytes - $0) / Double(trial.size) },
            sentHEAD: log.contains { $0.method == .head }, uploadExtraBytes: uploadExtra)
        return Ran(observation: observation, peakRSSBytes: finished.peakRSSBytes, seconds: finished.wallSeconds)
    }

    /// Where the fault script's first entry breaks the transfer: `drop:40pct` or `stall:30pct`.
    static func breakOffset(of trial: Trial) -> Int64? {
        guard let first = trial.faults.split(separator: ",").first else { return nil }
        let words = first.split(separator: ":")
        guard words.count >= 2, ["drop", "stall"].contains(words[0]) else { return nil }
        if words[1].hasSuffix("pct"), let percent = Int64(words[1].dropLast(3)) { return trial.size * percent / 100 }
        return (try? ByteSize.parse(String(words[1]))).map { min($0, trial.size) }
    }
}

extension LabServer {
    /// The requests of one run token, oldest first; `method` keeps only those.
    func requests(run token: String, method: RequestMethod? = nil) -> [LoggedRequest] {
        requestLog.filter { ($0.method == method || method == nil) && $0.target.hasSuffix("run=\(token)") }
    }

    /// Response body bytes sent for the GETs of one run token.
    func bodyBytesSent(run token: String) -> Int64 {
        requests(run: token, method: .get).reduce(0) { $0 + $1.bodyBytesSent }
    }
}
