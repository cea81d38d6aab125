import Foundation
import LabCatalogue
import LabFixtures
import LabHarness
import LabKit
import LabReport
import LabServer
import LabVocabulary

/// Runs one lesson process for one case and judges the result by itself: the file's SHA-256 is
/// checked here, against the fixture's, whatever the lesson claims.
struct LessonRunner {
    let source: FixtureSource
    /// Where the lesson executables are (next to `lab` in the build folder).
    let executables: URL
    /// Scratch space; every repetition gets a folder of its own, removed afterwards.
    let workFolder: URL
    let digests: DigestCache

    struct Measured {
        var repetition: ComparisonResults.Repetition
        var timeline: [ComparisonResults.RSSSample]
        /// Its exchanges against time, for a case the report draws.
        var exchanges: ComparisonResults.ExchangeTimeline?
        /// Every exchange the lesson's record names, for the run's HAR file.
        var requests: [HTTPExchange] = []
        /// What a failed run did, for the catalogue to recognise; nil for a run that passed.
        var failure: Observation?
    }

    func run(_ runCase: RunCase, repetition: Int) throws -> Measured {
        let folder = workFolder.appendingPathComponent(
            "\(runCase.lesson.id)-\(runCase.variant)-\(runCase.scenario.rawValue)-\(runCase.network.map { "\($0)-" } ?? "")\(runCase.size)-\(repetition)")
        try? FileManager.default.removeItem(at: folder)
        let temporary = folder.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let fixture = Fixture(name: "compare-\(runCase.size).bin", size: runCase.size, content: runCase.faults.content)
        let token = "compare-\(UUID().uuidString.prefix(8))"
        let url = runCase.lesson.id.uploads
            ? source.uploadURL(run: token)
            : source.url(for: fixture, faults: runCase.faults, run: token)
        let output = folder.appendingPathComponent(fixture.name)
        let faultsText = runCase.faults.isNone ? "" : runCase.faults.description
        let expected = Fixture(name: fixture.name, size: fixture.size, generation: runCase.scenario.finalGeneration,
                               content: fixture.content)
        let timeout = Self.timeout(for: runCase)
        let arguments = Self.arguments(for: runCase, url: url, output: output, sha256: digests.sha256(of: expected), timeout: timeout)
        var process = MeasuredProcess(
            program: executables.appendingPathComponent(runCase.lesson.id.executable),
            arguments: arguments, outputFolder: folder, timeout: timeout)
        if runCase.drawsExchanges { process.watchedOutput = output }
        // Lesson 05 keeps Foundation-style temp files in $TMPDIR; this keeps them in the folder.
        process.environment["TMPDIR"] = temporary.path
        // A lesson keeps Foundation's URL cache in the folders of its run (an app's, in its
        // container's Library/Caches), where a second launch's cache is measured.
        let cache = urlCacheFolder(in: FoundationStores(cache: output.appendingPathComponent(AppContainer.caches), cookies: output))

        let (finished, secondLaunchSeconds, killedRun) = try play(process, runCase, token: token, folder: folder, faults: faultsText)
        let reading = LessonResult.read(standardOutput: finished.stdout)
        let record = reading.record
        var repetition = judge(finished, reading: reading, runCase: runCase, expected: expected, token: token)
        repetition.secondLaunch = secondLaunchSeconds.map { seconds in
            ComparisonResults.SecondLaunch(requests: record?.requests.map { "\($0.method.rawValue) \($0.status.map(String.init) ?? "–")" } ?? [],
                                           bodyBytes: record?.bytesReceived ?? 0, seconds: seconds,
                                           fileBytes: record?.fileBytes ?? 0, cacheBytes: MeasuredProcess.bytes(at: cache))
        }
        let passed = repetition.verified && repetition.exitCode == 0
        let exchanges = runCase.drawsExchanges ? record.map { record in
            let run = ComparisonResults.ExchangeTimeline(origin: finished.startedAt, faults: faultsText, exchanges: record.requests,
                                                         disk: finished.disk, events: record.events, sizeBytes: runCase.size)
            return killedRun.map { $0.run.followed(by: run, killedAt: $0.at) } ?? run
        } : nil
        return Measured(
            repetition: repetition, timeline: finished.timeline, exchanges: exchanges, requests: record?.requests ?? [],
            failure: passed ? nil : observe(finished, record: record, runCase: runCase, expected: expected, token: token))
    }

    /// The lesson's command line for one case: where to download, what to check, how slow a disk.
    private static func arguments(for runCase: RunCase, url: URL, output: URL, sha256: String, timeout: Duration) -> [String] {
        var arguments = ["--url", url.absoluteString, "--output", output.path,
                         "--variant", runCase.variant.rawValue, "--json", "--quiet"]
        arguments += runCase.scenario.lessonArguments.isEmpty ? runCase.lesson.compareArguments : runCase.scenario.lessonArguments
        if runCase.lesson.id.uploads {
            arguments += ["--size", String(runCase.size)]
        } else {
            // The lesson checks its own file too, so its exit status means what it says.
            arguments += ["--sha256", sha256]
        }
        if runCase.scenario == .slowDisk {
            arguments += ["--write-delay-us", String(Scenario.slowDiskWriteDelayMicroseconds)]
        }
        return arguments + TransferLimits.arguments(forFileOf: runCase.size, within: timeout)
    }

    /// Runs the process as the scenario says: once, killed at the stall and run again, or
    /// launched twice. The killed run is drawn when the case draws its exchanges.
    private func play(_ process: MeasuredProcess, _ runCase: RunCase, token: String, folder: URL, faults faultsText: String) throws
        -> (MeasuredProcess.Finished, secondLaunchSeconds: Double?, killedRun: (run: ComparisonResults.ExchangeTimeline, at: Double)?) {
        if runCase.scenario == .killRerun {
            let killed = try process.run(killWhen: Self.killPoint(log: { source.requests(method: .get, run: token) }, files: folder,
                                                                stallAttempt: runCase.faults.stallToKillAt))
            var killedRun: (run: ComparisonResults.ExchangeTimeline, at: Double)?
            if runCase.drawsExchanges, killed.signal == SIGKILL, let logged = source.requests(run: token) {
                killedRun = (ComparisonResults.ExchangeTimeline(killed: killed, logged: logged, server: source.baseURL, faults: faultsText,
                                                                sizeBytes: runCase.size),
                             killed.startedAt + killed.wallSeconds)
            }
            if killed.signal == SIGKILL { source.endStalls(run: token) }
            return (try process.run().after(killed), nil, killedRun)
        }
        if runCase.scenario.relaunches {
            let first = try process.run()
            let second = try process.run()
            return (second.after(first), second.wallSeconds, nil)
        }
        return (try process.run(), nil, nil)
    }

    /// The failed run as the catalogue describes runs (see `LessonDefects.predicts`).
    private func observe(_ finished: MeasuredProcess.Finished, record: LessonResult?, runCase: RunCase,
                         expected: Fixture, token: String) -> Observation {
        let file: FileState
        var uploadExtra: Int64?
        if runCase.lesson.id.uploads {
            let stored = source.uploadedFiles(run: token).first
            uploadExtra = stored.map { $0.bytes - runCase.size }
            file = stored.map { $0.bytes > runCase.size ? .longer(bytes: $0.bytes) : .shorter(bytes: $0.bytes) } ?? .missing
        } else {
            file = FileInspection.state(of: record.map { URL(fileURLWithPath: $0.output) }, against: expected)
        }
        let ending = finished.ending(record: record, timeout: Self.timeout(for: runCase))
        return Observation(
            ending: ending, outcome: record?.outcome, file: file, fileName: record.map { URL(fileURLWithPath: $0.output).lastPathComponent },
            resourceName: expected.name, size: runCase.size,
            // A relaunch's first run ends with the whole file: that is where the second begins.
            breakOffset: runCase.scenario.relaunches ? runCase.size : runCase.scenario.faults.breakOffset(bodyLength: runCase.size),
            memoryGrowth: nil, sentHEAD: false, uploadExtraBytes: uploadExtra)
    }

    private func judge(_ finished: MeasuredProcess.Finished, reading: LessonResult.Reading, runCase: RunCase,
                       expected: Fixture, token: String) -> ComparisonResults.Repetition {
        let record = reading.record
        let bytesOnWire: Int64
        if runCase.lesson.id.uploads {
            // The request body the server read (another server: what the lesson streamed).
            bytesOnWire = source.requestBodyBytes(run: token) ?? record?.bytesWritten ?? 0
        } else {
            bytesOnWire = source.bodyBytesSent(run: token) ?? record?.bytesReceived ?? 0
        }
        let file = record.map { URL(fileURLWithPath: $0.output) }
        let verified: Bool
        var problem: String?
        if runCase.lesson.id.uploads {
            // Only the server saw the bytes; the lesson compares its answer with the file sent.
            verified = finished.exitCode == 0 && record?.verified == true
        } else {
            (verified, problem) = check(file, against: expected)
        }
        let error: String?
        if verified, finished.exitCode != 0 {
            // The bytes are right but the lesson says otherwise: that is a failure too.
            error = "exit \(finished.exitCode.map(String.init) ?? "by signal") although the file is right"
                + (record?.error.map { ": \($0.message)" } ?? "")
        } else if record?.outcome == .verificationFailed, let problem {
            // The harness's own words: short, and the same for every lesson.
            error = problem
        } else if let message = record?.error?.message {
            error = message
        } else if finished.timedOut {
            error = "timed out after \(Int(Self.timeout(for: runCase).seconds)) s"
        } else if let signal = finished.signal {
            error = "ended by signal \(signal)"
        } else if let unreadable = reading.problem {
            error = unreadable
        } else if record == nil {
            error = "no result record; stderr: \(finished.stderr.split(separator: "\n").last ?? "(empty)")"
        } else if finished.exitCode == 0, !verified {
            // The lesson believed it; the bytes say otherwise. This is the worst outcome.
            error = "exit 0, but " + (problem ?? "the file is wrong")
        } else {
            error = problem
        }
        return ComparisonResults.Repetition(
            exitCode: finished.exitCode ?? -1,
            outcome: record?.outcome ?? (finished.timedOut ? .timedOut : .crashed),
            verified: verified,
            wallSeconds: finished.wallSeconds,
            cpuSeconds: finished.cpuSeconds,
            peakRSSBytes: finished.peakRSSBytes,
            // A run that moved no bytes (a refusal, a 404) has no throughput to speak of.
            throughputBytesPerSecond: bytesOnWire == 0 ? 0 : Double(runCase.size) / max(finished.wallSeconds, 1e-6),
            bytesOnWire: bytesOnWire,
            bytesDownloadedAgain: runCase.lesson.id.uploads ? 0 : max(0, bytesOnWire - runCase.size * Int64(runCase.scenario.versionsFetched)),
            error: error.map(Self.shorteningDigests),
            // The record of a kill-rerun or a relaunch covers the second run only.
            transferSeconds: runCase.scenario == .killRerun || runCase.scenario.relaunches ? nil : record?.wallSeconds,
            verificationSeconds: runCase.scenario == .killRerun || runCase.scenario.relaunches ? nil : record?.verificationSeconds,
            firstByteSeconds: source.requests(method: .get, run: token)?.first?.firstByteSeconds)
    }

    /// A cause is read in a table cell: a SHA-256 there shows as its first 12 digits.
    static func shorteningDigests(_ text: String) -> String {
        text.replacing(/[0-9a-f]{64}/) { $0.output.prefix(12) + "…" }
    }

    /// The file must have the fixture's size and SHA-256.
    private func check(_ file: URL?, against expected: Fixture) -> (Bool, String?) {
        guard let file, let attributes = try? FileManager.default.attributesOfItem(atPath: file.path),
              let size = (attributes[.size] as? NSNumber)?.int64Value
        else { return (false, "no file written") }
        guard size == expected.size else {
            return (false, "file has \(ByteFormat.grouped(size)) bytes, expected \(ByteFormat.grouped(expected.size))")
        }
        guard let digest = try? FileDigest.sha256Hex(of: file) else { return (false, "the file cannot be read") }
        guard digest == digests.sha256(of: expected) else {
            return (false, "right size, wrong bytes (SHA-256 differs)")
        }
        return (true, nil)
    }

    /// Kill once the server has stalled in the script's last held stall (`stallAttempt`, its
    /// GET's number; any GET's stall where the script names none) and the lesson has written
    /// what arrived: its files have stopped growing (for at most 2 s).
    static func killPoint(log: @escaping () -> [LoggedRequest]?, files folder: URL, stallAttempt: Int?) -> () -> Bool {
        var stalledSince: ContinuousClock.Instant?
        return {
            let gets = log() ?? []
            // An earlier stall is one the program is meant to leave (by a Pause, a retry) or
            // never to reach: the kill never comes before the program has left it.
            let stalled = stallAttempt.map { gets.indices.contains($0 - 1) && gets[$0 - 1].stalled } ?? gets.contains(where: \.stalled)
            guard stalled else { return false }
            let now = ContinuousClock.now
            let since = stalledSince ?? now
            stalledSince = since
            if let sent = gets.bytesSentOnceQuietAfterAStall, Self.bytesOnDisk(in: folder) >= sent { return true }
            return now - since > Self.keptInMemoryPatience
        }
    }

    /// How long after the last stall a run that has not written what it was sent (or that
    /// keeps asking) is still given: code that keeps the body in memory never will, and is
    /// killed all the same. Code that writes as it goes is killed as soon as its files hold
    /// what was sent, however slow the machine.
    static let keptInMemoryPatience: Duration = .seconds(2)

    /// The bytes the lesson's files (its output, partial files, resume data, temp files, not the
    /// logs) take on disk: a file made at its full size and filled in ranges counts what has
    /// been written into it, its allocated blocks.
    private static func bytesOnDisk(in folder: URL) -> Int64 {
        let logs: Set = ["stdout", "stderr", "rusage"]
        let files = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        var total: Int64 = 0
        while let file = files?.nextObject() as? URL {
            if logs.contains(file.lastPathComponent) { continue }
            var facts = stat()
            guard lstat(file.path, &facts) == 0, (facts.st_mode & S_IFMT) == S_IFREG else { continue }
            total += min(Int64(facts.st_size), Int64(facts.st_blocks) * 512)
        }
        return total
    }

    /// Generous: a debug build of the slowest lesson takes about 35 s for 256 MiB.
    /// A minute and half a second a MiB; over a slow link, also four times what its bandwidth needs.
    static func timeout(for runCase: RunCase) -> Duration {
        let overLink = runCase.network.map { 4 * runCase.size / $0.bytesPerSecond } ?? 0
        return .seconds(60 + Int(runCase.size >> 20) / 2 + Int(overLink))
    }
}

/// Where fixtures come from: the lab server inside this process, or another server.
enum FixtureSource {
    case embedded(LabServer)
    /// A server that serves the lab's fixture URLs (`lab serve`, or nginx with the files that
    /// `lab compare --write-fixtures` writes). No fault injection, no request log.
    case external(URL)

    func url(for fixture: Fixture, faults: FaultScript, run: String) -> URL {
        switch self {
        case .embedded(let server):
            server.url(for: fixture, faults: faults.isNone ? nil : faults.description, run: run)
        case .external(let base):
            URL(string: base.absoluteString.trimmingSuffix("/") + "/fixtures/\(fixture.name)?size=\(fixture.size)")!
        }
    }

    /// The token lets the server's log tell this run's upload from the others.
    func uploadURL(run token: String) -> URL {
        URL(string: baseURL.absoluteString.trimmingSuffix("/") + "/upload?run=\(token)")!
    }

    var kind: ServerKind {
        switch self {
        case .embedded: .embedded
        case .external: .external
        }
    }

    var baseURL: URL {
        switch self {
        case .embedded(let server): server.baseURL
        case .external(let base): base
        }
    }

    /// Response body bytes sent for GETs of one run token; nil when the server is not ours.
    func bodyBytesSent(run token: String) -> Int64? {
        requests(method: .get, run: token)?.reduce(0) { $0 + $1.bodyBytesSent }
    }

    /// The rerun after a kill meets no stall the killed run met (the lab's server only).
    func endStalls(run token: String) {
        if case .embedded(let server) = self { server.endStalls(run: token) }
    }

    /// Request body bytes read for POSTs of one run token; nil when the server is not ours.
    func requestBodyBytes(run token: String) -> Int64? {
        requests(method: .post, run: token)?.reduce(0) { $0 + $1.requestBodyBytes }
    }

    /// The file parts the server stored for the uploads of one run token.
    func uploadedFiles(run token: String) -> [LoggedRequest.UploadedFile] {
        requests(method: .post, run: token)?.flatMap(\.uploadedFiles) ?? []
    }

    func requests(method: RequestMethod? = nil, run token: String) -> [LoggedRequest]? {
        guard case .embedded(let server) = self else { return nil }
        return server.requests(run: token, method: method)
    }
}

extension String {
    func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}

/// Expected SHA-256s, computed once per fixture: hashing 256 MiB takes a while.
final class DigestCache {
    private var known: [Fixture: String] = [:]

    func sha256(of fixture: Fixture) -> String {
        if let digest = known[fixture] { return digest }
        let digest = fixture.sha256Hex()
        known[fixture] = digest
        return digest
    }
}
