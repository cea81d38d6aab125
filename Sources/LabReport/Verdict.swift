/// What one lesson × variant did on one machine, in a line a student can read at a glance:
/// "flat 38.3 MiB at 256 MiB, 0.61× curl, resumes after a drop and a kill".
import LabVocabulary
struct Verdict {
    /// The phrases, in order: memory, speed, then each scenario's outcome.
    let phrases: [String]
    /// A failure nobody meant to show: the line is marked so that it is not missed.
    let hasUnexpectedFailure: Bool

    var line: String { phrases.isEmpty ? "no runs" : phrases.joined(separator: ", ") }

    /// Memory that rises by more than this share of the extra file size is said to grow with the
    /// file: a strategy that streams to disk stays near zero, one that buffers the file near one.
    static let growthSlope = 0.1
    /// A rise in peak memory smaller than this is the runtime's noise, not the strategy: the same
    /// lesson's peak moves by a few MiB from run to run.
    static let memoryNoise: Int64 = 8 << 20
    /// With fewer repetitions than this, two throughputs on a busy machine cannot be told apart.
    static let repetitionsForSpeed = 3
    /// Downloading more than this share of the file again after a fault is starting over.
    static let startOverShare = 0.25

    /// More than `startOverShare` of a `size`-byte file fetched again beyond the `usual` bytes
    /// the strategy fetches twice with no fault at all.
    static func startedOver(fetching again: Int64, beyond usual: Int64, of size: Int64) -> Bool {
        size > 0 && Double(max(0, again - usual)) / Double(size) > startOverShare
    }

    init(_ strategy: Strategy, on machine: ComparisonResults, in data: ReportData) {
        let clean = data.runs(machine, strategy, scenario: Scenario.clean)
        var phrases: [String] = []
        let passed = clean.filter { $0.status == .pass }
        if let memory = Self.memory(passed) { phrases.append(memory) }
        if let largest = passed.last,
           let curl = machine.references.first(where: { $0.kind == .curl && $0.sizeBytes == largest.sizeBytes }),
           curl.throughputBytesPerSecond > 0 {
            phrases.append(machine.settings.repetitions < Self.repetitionsForSpeed
                ? "speed: not enough runs to tell"
                : "\(Units.multiple(largest.throughputBytesPerSecond / curl.throughputBytesPerSecond)) curl")
        }

        var refused = false
        var secondLaunch: String?
        var resumedAfter: [String] = [], startedOverAfter: [String] = []
        var passes: [String] = [], expectedFailures: [String] = [], unexpectedFailures: [String] = []
        for scenario in data.scenarios where scenario != Scenario.clean {
            for run in data.runs(machine, strategy, scenario: scenario) {
                switch run.status {
                case .pass:
                    // Only what the fault cost counts: lesson 05 fetches part of the file twice in
                    // every run, because it presses Pause itself.
                    let fetchedAgain = {
                        let usual = Self.faultFreeBaseline(machine, strategy, size: run.sizeBytes, in: data)?.bytesDownloadedAgain ?? 0
                        return Self.startedOver(fetching: run.bytesDownloadedAgain, beyond: usual, of: run.sizeBytes)
                    }
                    if let event = Self.interruptions[scenario] {
                        if fetchedAgain() { startedOverAfter.append(event) } else { resumedAfter.append(event) }
                    } else if scenario == .relaunch {
                        secondLaunch = fetchedAgain() ? "downloads the file again on a second launch" : "keeps the file on a second launch"
                    } else {
                        passes.append(scenario.rawValue)
                    }
                case .refused:
                    refused = true
                default:
                    if run.expectedFailure { expectedFailures.append(scenario.rawValue) } else { unexpectedFailures.append(scenario.rawValue) }
                }
            }
        }
        refused = refused || clean.contains { $0.status == .refused }
        let failedClean = clean.filter { $0.status == .fail }
        expectedFailures.insert(contentsOf: Self.cleanFailures(failedClean.filter(\.expectedFailure), of: clean), at: 0)
        unexpectedFailures.insert(contentsOf: Self.cleanFailures(failedClean.filter { !$0.expectedFailure }, of: clean), at: 0)

        if !resumedAfter.isEmpty { phrases.append("resumes after " + Self.list(resumedAfter)) }
        if !startedOverAfter.isEmpty { phrases.append("starts over after " + Self.list(startedOverAfter)) }
        if refused { phrases.append("refuses files over its limit") }
        if let secondLaunch { phrases.append(secondLaunch) }
        // Naming every passing scenario would push the line past one line; the matrix names them.
        if passes.count == 1 { phrases.append("passes " + passes[0]) }
        if passes.count > 1 { phrases.append("passes \(passes.count) other faults") }
        if !expectedFailures.isEmpty { phrases.append("fails \(Self.list(expectedFailures)) (expected)") }
        if !unexpectedFailures.isEmpty { phrases.append("FAILS \(Self.list(unexpectedFailures)) (unexpected)") }
        self.phrases = phrases
        hasUnexpectedFailure = !unexpectedFailures.isEmpty
    }

    /// A run of the same strategy and size with no network fault: clean, else slow-disk.
    private static func faultFreeBaseline(_ machine: ComparisonResults, _ strategy: Strategy, size: Int64,
                                          in data: ReportData) -> ReportData.Run? {
        for scenario in [Scenario.clean, .slowDisk] {
            if let run = data.runs(machine, strategy, scenario: scenario).first(where: { $0.sizeBytes == size && $0.status == .pass }) {
                return run
            }
        }
        return nil
    }

    /// The scenarios that interrupt a download, by what happens to it.
    private static let interruptions: [Scenario: String] = [.dropResume: "a drop", .killRerun: "a kill"]

    /// "a drop and a kill", "ignore-range, entity-changed and slow-disk".
    private static func list(_ items: [String]) -> String {
        items.count > 1 ? items.dropLast().joined(separator: ", ") + " and " + items[items.count - 1] : items.joined()
    }

    /// "clean from 32 MiB" when every size from the first failure up failed, else each size.
    private static func cleanFailures(_ failed: [ReportData.Run], of clean: [ReportData.Run]) -> [String] {
        guard let first = failed.first else { return [] }
        let fromFirstUp = clean.map(\.sizeBytes).filter { $0 >= first.sizeBytes }
        if failed.count > 1 && failed.map(\.sizeBytes) == fromFirstUp { return ["clean from \(Units.bytes(first.sizeBytes))"] }
        return failed.map { "clean at \(Units.bytes($0.sizeBytes))" }
    }

    /// "flat 38.3 MiB at 256 MiB" or "grows with the file: 2.0× its size, 530 MiB at 256 MiB",
    /// from the smallest and largest clean runs that passed. The multiple is the slope, what
    /// each extra MiB of file adds: the number of copies held, free of the process's baseline.
    /// Sizes too close together to tell flat from growing say so instead.
    private static func memory(_ passed: [ReportData.Run]) -> String? {
        guard let smallest = passed.first, let largest = passed.last else { return nil }
        let at = "\(Units.bytes(largest.peakRSSBytes)) at \(Units.bytes(largest.sizeBytes))"
        guard largest.sizeBytes > smallest.sizeBytes else { return "peak \(at)" }
        let (rise, span) = (largest.peakRSSBytes - smallest.peakRSSBytes, largest.sizeBytes - smallest.sizeBytes)
        let slope = Double(rise) / Double(span)
        if slope > growthSlope && rise >= memoryNoise {
            return "grows with the file: \(Units.multiple(slope)) its size, \(at)"
        }
        // Flat only when growth at the threshold would have risen clear of the noise.
        if growthSlope * Double(span) >= Double(memoryNoise) { return "flat \(at)" }
        return "memory: not enough runs to tell (\(Units.bytes(smallest.sizeBytes)) and \(Units.bytes(largest.sizeBytes)) are too close), peak \(at)"
    }
}
