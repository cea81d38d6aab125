/// A lesson in one of its variants: one line in each chart, one row in each table.
import LabVocabulary
struct Strategy: Hashable, Comparable {
    let lesson: String
    let variant: Variant

    /// What `data-series` says: "03-outputstream corrected".
    var id: String { "\(lesson) \(variant.rawValue)" }

    /// Lessons in id order ("00-…" first); within a lesson the article before its correction.
    static func < (left: Strategy, right: Strategy) -> Bool {
        if left.lesson != right.lesson { return left.lesson < right.lesson }
        return Variant.allCases.firstIndex(of: left.variant)! < Variant.allCases.firstIndex(of: right.variant)!
    }

    var isArticle: Bool { variant == .article }
}

/// The results of every machine, indexed the ways the report reads them.
struct ReportData {
    typealias Run = ComparisonResults.Run

    /// The lessons this lab ships, in order; they keep the same colour in every report.
    static let knownLessons = LessonID.allCases.map(\.rawValue)

    /// Each machine with its loopback runs only: every section but the slow networks' reads these.
    let machines: [ComparisonResults]
    /// Each machine that ran over network profiles, with those runs.
    let networkRuns: [(machine: ComparisonResults, runs: [Run])]
    /// Every lesson × variant any machine ran.
    let strategies: [Strategy]
    /// Every scenario any machine ran, in the order a student meets them (`Scenario.allCases`).
    let scenarios: [Scenario]
    /// Every size of a clean run on any machine, smallest first.
    let cleanSizes: [Int64]
    private let titles: [String: String]

    init(_ machines: [ComparisonResults]) {
        self.machines = machines.map { machine in
            var loopback = machine
            loopback.runs = machine.loopbackRuns
            return loopback
        }
        networkRuns = machines.compactMap { machine in
            let runs = machine.runs.filter { $0.network != nil }
            return runs.isEmpty ? nil : (machine, runs)
        }
        strategies = Set(machines.flatMap(\.runs).map { Strategy(lesson: $0.lesson, variant: $0.variant) }).sorted()
        let runs = self.machines.flatMap(\.runs)
        let ran = Set(runs.map(\.scenario))
        scenarios = Scenario.allCases.filter(ran.contains)
        cleanSizes = Set(runs.filter { $0.scenario == .clean }.map(\.sizeBytes)).sorted()
        titles = Dictionary(runs.map { ($0.lesson, $0.title) }, uniquingKeysWith: { first, _ in first })
    }

    var isMerged: Bool { machines.count > 1 }

    var lessons: [String] {
        var seen = Set<String>()
        return strategies.map(\.lesson).filter { seen.insert($0).inserted }
    }

    func title(_ lesson: String) -> String { titles[lesson] ?? lesson }

    /// "OutputStream append, corrected".
    func name(_ strategy: Strategy) -> String { "\(title(strategy.lesson)), \(strategy.variant.rawValue)" }

    /// The runs of one machine for one lesson × variant and scenario, smallest size first.
    func runs(_ machine: ComparisonResults, _ strategy: Strategy, scenario: Scenario) -> [Run] {
        machine.runs
            .filter { $0.lesson == strategy.lesson && $0.variant == strategy.variant && $0.scenario == scenario }
            .sorted { $0.sizeBytes < $1.sizeBytes }
    }

    /// The largest file the clean scenario downloaded on this machine.
    func largestCleanSize(_ machine: ComparisonResults) -> Int64? {
        machine.loopbackRuns.filter { $0.scenario == .clean }.map(\.sizeBytes).max()
    }

    /// The reference of this kind measured at `size`, or failing that at its largest size.
    func reference(_ kind: ReferenceKind, of machine: ComparisonResults, near size: Int64) -> ComparisonResults.Reference? {
        let ofKind = machine.references.filter { $0.kind == kind }
        return ofKind.first { $0.sizeBytes == size } ?? ofKind.max { $0.sizeBytes < $1.sizeBytes }
    }

    /// Index into the palette: the lab's own lessons by their number, others after them.
    func colourIndex(_ lesson: String) -> Int {
        if let known = Self.knownLessons.firstIndex(of: lesson) { return known }
        let unknown = lessons.filter { !Self.knownLessons.contains($0) }
        return Self.knownLessons.count + (unknown.firstIndex(of: lesson) ?? 0)
    }
}
