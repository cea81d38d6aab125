import Foundation
import LabCatalogue
import LabFixtures
import LabHarness
import LabKit
import LabReport
import LabVocabulary

/// Runs a plan: the references first, then every case `repetitions` times, one process at a time
/// so the processes never compete for the two cores; and sums each case up in a `Run`.
struct Comparison {
    let plan: ComparisonPlan
    let source: FixtureSource
    let executables: URL
    let workFolder: URL
    /// Where each case's HAR file goes: the median repetition's exchanges.
    let archiveFolder: URL
    let progress: (String) -> Void

    func run(label: String) throws -> ComparisonResults {
        let started = ContinuousClock.now
        let startedAt = Date()
        let digests = DigestCache()
        let yardsticks = References(source: source, workFolder: workFolder, digests: digests,
                                    foundationFloor: executables.appendingPathComponent("foundation-floor"))
        let references = try measureReferences(yardsticks)
        let runner = LessonRunner(source: source, executables: executables, workFolder: workFolder, digests: digests)

        let cases = plan.cases
        var runs: [ComparisonResults.Run] = []
        let casesStarted = ContinuousClock.now
        var repetitionsLeft = cases.reduce(0) { $0 + plan.repetitions(of: $1) }
        var repetitionsDone = 0
        for (index, runCase) in cases.enumerated() {
            var measured: [LessonRunner.Measured] = []
            for repetition in 1...plan.repetitions(of: runCase) {
                let paired = try runCase.pairedReference.flatMap { try yardsticks.once($0, size: runCase.size) }
                var run = try runner.run(runCase, repetition: repetition)
                run.repetition.referenceSeconds = paired?.wallSeconds
                measured.append(run)
            }
            let run = summarize(runCase, measured)
            runs.append(run)
            try writeArchive(runCase, measured.first { $0.repetition.wallSeconds == run.wallSeconds } ?? measured[0])
            repetitionsDone += measured.count
            repetitionsLeft -= measured.count
            // What is left, at the pace so far: runs differ, so it is a guess that settles as it goes.
            let left = (ContinuousClock.now - casesStarted).seconds / Double(repetitionsDone) * Double(repetitionsLeft)
            progress(progressLine(index: index + 1, of: cases.count, run) + (repetitionsLeft > 0 ? "  · \(Self.minutes(left)) left" : ""))
        }

        var connections: [ComparisonResults.ConnectionsRun]?
        if let size = plan.connectionsSize, case .embedded(let server) = source {
            connections = try Connections(server: server, executables: executables, workFolder: workFolder, digests: digests)
                .measure(size: size, progress: progress)
        }
        let environment = MachineFacts.environment(
            source: source, startedAt: startedAt, duration: (ContinuousClock.now - started).seconds)
        var results = ComparisonResults(label: label, environment: environment, settings: plan.settings,
                                        references: references, runs: runs)
        results.connections = connections
        return results
    }

    private func measureReferences(_ references: References) throws -> [ComparisonResults.Reference] {
        let sizes = plan.scenarios.contains(.clean) ? plan.sizes : [plan.faultSize]
        var measured: [ComparisonResults.Reference] = []
        for size in sizes {
            measured += try references.clients(size: size, repetitions: plan.repetitions)
        }
        if plan.scenarios.contains(.clean), plan.lessons.contains(where: \.id.uploads) {
            for size in plan.sizes {
                if let upload = try references.formUpload(size: size, repetitions: plan.repetitions) { measured.append(upload) }
            }
        }
        let largest = sizes.max()!
        if let loopback = try references.loopbackLimit(size: largest, repetitions: plan.repetitions) {
            measured.append(loopback)
        }
        measured.append(try references.diskLimit(size: largest, repetitions: plan.repetitions))
        for reference in measured {
            progress("reference  \(reference.kind.rawValue.padding(toLength: 16, withPad: " ", startingAt: 0)) "
                + "\(ByteFormat.iec(reference.sizeBytes).padding(toLength: 8, withPad: " ", startingAt: 0)) "
                + "\(String(format: "%6.2f s", reference.wallSeconds))  \(ByteFormat.iec(Int64(reference.throughputBytesPerSecond)))/s")
        }
        return measured
    }

    private func summarize(_ runCase: RunCase, _ measured: [LessonRunner.Measured]) -> ComparisonResults.Run {
        let repetitions = measured.map(\.repetition)
        // A run passes when the file is right and the lesson says so: exit 0.
        let passed = { (repetition: ComparisonResults.Repetition) in repetition.verified && repetition.exitCode == 0 }
        let allPassed = repetitions.allSatisfy(passed)
        let status: ComparisonResults.RunStatus
        if runCase.expectsRefusal, repetitions.allSatisfy({ !$0.verified && $0.exitCode != 0 && $0.bytesOnWire == 0 }) {
            status = .refused
        } else {
            status = allPassed ? .pass : .fail
        }
        let cause: String? = switch status {
        case .pass: nil
        case .refused: repetitions.first?.error
        default: repetitions.first { !passed($0) }?.error
        }
        // The timeline shown is the one of the repetition with the median wall time.
        let medianWall = median(repetitions.map(\.wallSeconds))
        let referenceSeconds = medianOfAll(repetitions.map(\.referenceSeconds))
        let typical = measured.first { $0.repetition.wallSeconds == medianWall }!
        var run = ComparisonResults.Run(
            lesson: runCase.lesson.id.rawValue, title: runCase.lesson.id.shortTitle, variant: runCase.variant,
            scenario: runCase.scenario, sizeBytes: runCase.size, status: status,
            expectedFailure: status == .fail && isPredicted(runCase, measured), cause: cause,
            wallSeconds: medianWall,
            cpuSeconds: median(repetitions.map(\.cpuSeconds)),
            peakRSSBytes: median(repetitions.map(\.peakRSSBytes)),
            throughputBytesPerSecond: median(repetitions.map(\.throughputBytesPerSecond)),
            bytesOnWire: median(repetitions.map(\.bytesOnWire)),
            bytesDownloadedAgain: median(repetitions.map(\.bytesDownloadedAgain)),
            repetitions: repetitions,
            rssTimeline: runCase.scenario == .clean ? typical.timeline : nil,
            transferSeconds: medianOfAll(repetitions.map(\.transferSeconds)),
            verificationSeconds: medianOfAll(repetitions.map(\.verificationSeconds)),
            // Named only where it ran: without curl, the upload has no curl -F beside it.
            reference: referenceSeconds == nil ? nil : runCase.pairedReference?.kind,
            referenceSeconds: referenceSeconds,
            // Each repetition against its own reference run, then the middle of those ratios:
            // a machine that slows down for a while slows both sides of a pair.
            costRatio: medianOfAll(repetitions.map { repetition in
                repetition.transferSeconds.flatMap { transfer in repetition.referenceSeconds.map { transfer / max($0, 1e-6) } }
            }),
            network: runCase.network,
            firstByteSeconds: medianOfAll(repetitions.map(\.firstByteSeconds)),
            secondLaunch: typical.repetition.secondLaunch)
        run.exchangeTimeline = typical.exchanges
        return run
    }

    /// The median when every repetition measured the value, else nil.
    private func medianOfAll(_ values: [Double?]) -> Double? {
        let measured = values.compactMap { $0 }
        return measured.count == values.count && !measured.isEmpty ? median(measured) : nil
    }

    /// An article run fails as expected only when the catalogue names a defect that fails it in
    /// this scenario, the way it failed.
    private func isPredicted(_ runCase: RunCase, _ measured: [LessonRunner.Measured]) -> Bool {
        guard runCase.variant == .article, let failure = measured.lazy.compactMap(\.failure).first else { return false }
        return runCase.lesson.predicts(failure, in: runCase.scenario)
    }

    /// `har/03-outputstream-article-ignore-range-16MiB.har`, written whole or not at all.
    private func writeArchive(_ runCase: RunCase, _ measured: LessonRunner.Measured) throws {
        let name = [runCase.lesson.id.rawValue, runCase.variant.rawValue, runCase.scenario.rawValue]
            + (runCase.network.map { [$0.rawValue] } ?? []) + [ByteSize.format(runCase.size)]
        let archive = HTTPArchive(exchanges: measured.requests, faults: runCase.faults,
                                  comment: "lab compare: \(name.joined(separator: ", "))")
        let file = archiveFolder.appendingPathComponent(name.joined(separator: "-") + ".har")
        do {
            try OutputFile.checkReplaceable(file)
            try archive.json().write(to: file, options: .atomic)
        } catch let error as OutputFileError {
            throw CompareError("cannot write \(file.path): \(error.reason)")
        } catch {
            throw CompareError("cannot write \(file.path): \(describe(error))")
        }
    }

    /// "2 min 10 s", "40 s".
    static func minutes(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole < 60 ? "\(whole) s" : "\(whole / 60) min \(whole % 60) s"
    }

    private func progressLine(index: Int, of count: Int, _ run: ComparisonResults.Run) -> String {
        let counter = "[\(String(index).leftPadded(to: String(count).count))/\(count)]"
        let verdict = switch run.status {
        case .pass: "pass"
        case .refused: "refused (by design)"
        default: run.expectedFailure ? "fail (expected): \(run.cause ?? "")" : "FAIL: \(run.cause ?? "")"
        }
        return "\(counter) \(run.lesson.padding(toLength: 24, withPad: " ", startingAt: 0)) "
            + "\(run.variant.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) "
            + "\((run.scenario.rawValue + (run.network.map { " \($0)" } ?? "")).padding(toLength: 19, withPad: " ", startingAt: 0)) "
            + "\(ByteFormat.iec(run.sizeBytes).leftPadded(to: 9)) "
            + "\(String(format: "%6.2f s", run.wallSeconds)) \(ByteFormat.iec(run.peakRSSBytes).leftPadded(to: 9))  \(verdict)"
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
