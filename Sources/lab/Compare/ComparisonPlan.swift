import Foundation
import LabCatalogue
import LabHarness
import LabKit
import LabServer
import LabVocabulary

extension LessonDefects {
    /// A scenario made for one lesson (crowded) runs only for the lesson whose defect it shows.
    func runs(_ scenario: Scenario) -> Bool {
        !scenario.isLessonSpecific || failingScenarios.contains(scenario)
    }

    /// The scenario whose exchanges the report draws for this lesson, among `scenarios`: one that
    /// shows a defect of its article, else a drop, else a clean run.
    func pictured(among scenarios: [Scenario]) -> Scenario? {
        let shown = Self.picturable.first { failingScenarios.contains($0) && scenarios.contains($0) && runs($0) }
        return shown ?? [Scenario.dropResume, .clean].first { scenarios.contains($0) && runs($0) && (!id.uploads || $0 == .clean) }
    }

    /// The scenarios a picture makes plain, the most telling first. A kill is drawn from the
    /// server's log up to the kill, then the rerun's record.
    private static let picturable: [Scenario] = [.ignoreRange, .entityChanged, .dropResume, .slowDisk, .killRerun]
}

/// Sizes, lessons, scenarios and repetitions of one comparison.
struct ComparisonPlan {
    var preset: Preset
    var sizes: [Int64]
    var faultSize: Int64
    var lessons: [LessonDefects]
    var variants: [Variant]
    var scenarios: [Scenario]
    /// How often each clean run is repeated: its cell is a time and a peak, and the report shows
    /// the median.
    var repetitions: Int
    /// How often each fault scenario's run is repeated: its cell says whether the file came out
    /// right and what came twice, which one run shows (`--fault-repetitions`).
    var faultRepetitions = 1
    /// Network profiles the corrected variants also run over, each at its own file size, clean
    /// and with a drop (`--profile`; `--full` adds 3g and wifi).
    var networks: [NetworkProfile] = []
    /// How often each run over a profile is repeated: once, unless `--repetitions` says. A run
    /// takes seconds by design, and what it shows (the first byte, the cost of a drop) is far
    /// larger than one run's noise.
    var networkRepetitions = 1

    /// `--connections-size`, in place of the preset's.
    var chosenConnectionsSize: Int64?

    /// The file lesson 11 fetches beside aria2c and curl over 1, 2, 4 and 8 connections
    /// (`Connections`); nil when lesson 11's corrected variant does not run clean.
    var connectionsSize: Int64? {
        guard scenarios.contains(.clean), variants.contains(.corrected), lessons.contains(where: \.id.fetchesInSegments) else { return nil }
        if let chosenConnectionsSize { return chosenConnectionsSize }
        return switch preset {
        case .quick: 8 << 20
        case .default, .custom: 16 << 20
        case .full: 1 << 30
        }
    }

    /// The two scenarios a profile runs: what the link gives, and what a drop costs on it.
    static let networkScenarios: [Scenario] = [.clean, .dropResume]

    static let defaultPlan = ComparisonPlan(
        preset: .default, sizes: [1 << 20, 32 << 20, 128 << 20], faultSize: 16 << 20,
        lessons: Catalogue.lessons, variants: Variant.allCases, scenarios: Scenario.allCases.filter(\.inDefaultPreset), repetitions: 3)

    static let quick = ComparisonPlan(
        preset: .quick, sizes: [1 << 20, 32 << 20], faultSize: 8 << 20,
        lessons: Catalogue.lessons, variants: Variant.allCases,
        scenarios: [.clean, .dropResume, .ignoreRange], repetitions: 1)

    static let full = ComparisonPlan(
        preset: .full, sizes: [1 << 20, 32 << 20, 128 << 20, 256 << 20, 1 << 30], faultSize: 64 << 20,
        lessons: Catalogue.lessons, variants: Variant.allCases, scenarios: Scenario.allCases, repetitions: 3,
        networks: [.threeG, .wifi])

    /// The runs in the order they happen: every clean size first, smallest first, so the
    /// first results arrive quickly; then the fault scenarios at `faultSize`.
    var cases: [RunCase] {
        var cases = plainCases
        for index in cases.indices where cases[index].network == nil && cases[index].size == pictureSize(cases[index].scenario) {
            cases[index].drawsExchanges = cases[index].lesson.pictured(among: scenarios) == cases[index].scenario
        }
        return cases
    }

    /// A clean picture is of the smallest size: the exchanges, not the bytes, are the story.
    private func pictureSize(_ scenario: Scenario) -> Int64 { scenario == .clean ? sizes.min() ?? faultSize : faultSize }

    private var plainCases: [RunCase] {
        var cases: [RunCase] = []
        if scenarios.contains(.clean) {
            for size in sizes {
                for lesson in lessons where lesson.id.timedAtEverySize || size == sizes.first || size == sizes.last {
                    for variant in variants {
                        cases.append(RunCase(lesson: lesson, variant: variant, scenario: .clean, size: size))
                    }
                }
            }
        }
        for scenario in scenarios where scenario != .clean {
            for lesson in lessons where !lesson.id.uploads && lesson.runs(scenario) {
                for variant in variants {
                    cases.append(RunCase(lesson: lesson, variant: variant, scenario: scenario, size: faultSize))
                }
            }
        }
        // Slow links last: what an engineer choosing for a mobile app weighs, for the fixed code.
        for network in networks {
            for scenario in Self.networkScenarios {
                for lesson in lessons where !lesson.id.uploads && lesson.runs(scenario) && variants.contains(.corrected) {
                    cases.append(RunCase(lesson: lesson, variant: .corrected, scenario: scenario, size: network.compareSize,
                                         network: network))
                }
            }
        }
        return cases
    }

    /// The plan as the record keeps it.
    var settings: ComparisonResults.Settings {
        ComparisonResults.Settings(
            preset: preset, sizes: sizes, faultSize: faultSize, lessons: lessons.map(\.id.rawValue),
            scenarios: scenarios, repetitions: repetitions,
            slowDiskWriteDelayMicroseconds: Scenario.slowDiskWriteDelayMicroseconds,
            networks: networks.isEmpty ? nil : networks,
            networkRepetitions: networks.isEmpty ? nil : networkRepetitions,
            faultRepetitions: faultRepetitions)
    }

    func repetitions(of runCase: RunCase) -> Int {
        if runCase.network != nil { return networkRepetitions }
        return runCase.scenario == .clean ? repetitions : faultRepetitions
    }
}

/// One lesson, variant, scenario and size; run `repetitions` times.
struct RunCase {
    let lesson: LessonDefects
    let variant: Variant
    let scenario: Scenario
    let size: Int64
    /// The link it runs over; nil for loopback.
    var network: NetworkProfile? = nil
    /// Its exchanges and the bytes on disk are kept for the report's picture of the lesson.
    var drawsExchanges = false

    /// The server's faults: the scenario's, every attempt over the network if there is one.
    var faults: FaultScript {
        if let network { return scenario.faults.over(network, attempts: TransferLimits.defaultAttempts) }
        // Lesson 11 is about a link that paces each connection; unpaced, its ranges would arrive
        // side by side only by chance.
        if lesson.id.fetchesInSegments { return scenario.faults.pacedPerConnection(forFileOf: size) }
        // A pictured run sends the whole file in about a quarter of a second, so that the samples
        // of the bytes on disk (every 10 ms) show each request's effect on the file.
        if drawsExchanges { return scenario.faults.paced(bytesPerSecond: max(size * 4, 64 << 10), attempts: TransferLimits.defaultAttempts) }
        return scenario.faults
    }

    /// The reference that does this run's transfer with nothing around it, run right before
    /// each repetition so that both meet the machine in the same state: corrected variants,
    /// clean runs (the report's "lab's own cost").
    var pairedReference: References.Paired? {
        // Lesson 11's clean run is paced, so a floor at full speed would measure something else.
        guard scenario == .clean, variant == .corrected, !expectsRefusal, network == nil, !lesson.id.fetchesInSegments else { return nil }
        return lesson.id.uploads ? .formUpload : .foundationFloor
    }

    /// Lesson 00 corrected declines a file this big, and that is the right answer.
    var expectsRefusal: Bool {
        guard variant == .corrected, let limit = lesson.correctedRefusesAbove else { return false }
        return size > limit
    }
}
