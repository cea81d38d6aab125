import LabVocabulary

/// What a class has submitted: each student's latest result of every check, and their latest
/// comparison. The class server builds it from its store; `ClassPage` and the exports read it.
public struct ClassGrid: Sendable {
    /// Every student who has submitted, in the order the page lists them.
    public let students: [String]
    /// Every check of every exercise, in the catalogue's order.
    public let columns: [Column]
    public let cells: [Cell]
    public let comparisons: [Comparison]
    /// How many submissions the class has made, replays not counted.
    public let submissions: Int

    public init(students: [String], columns: [Column], cells: [Cell], comparisons: [Comparison], submissions: Int) {
        self.students = students
        self.columns = columns
        self.cells = cells
        self.comparisons = comparisons
        self.submissions = submissions
        cellsByKey = Dictionary(cells.map { (Key(student: $0.student, exercise: $0.exercise, check: $0.check), $0) },
                                uniquingKeysWith: { first, _ in first })
        latestSubmission = Dictionary(cells.map { ($0.student, $0.submittedAt) }, uniquingKeysWith: max)
    }

    /// Each student's newest submission time (ISO 8601, which sorts as time does).
    public let latestSubmission: [String: String]

    public struct Column: Sendable, Equatable {
        public let exercise: String
        /// "03".
        public let number: String
        public let check: String
        /// Whether the exercise's starting code passes the check too: it earns no one credit.
        public let baseline: Bool

        public init(exercise: String, number: String, check: String, baseline: Bool) {
            self.exercise = exercise
            self.number = number
            self.check = check
            self.baseline = baseline
        }
    }

    public struct Cell: Sendable {
        public let student: String
        public let exercise: String
        public let check: String
        public let status: CheckStatus
        public let passed: Bool
        public let attempted: Bool
        public let detail: String
        /// When the server received the submission, ISO 8601 in UTC.
        public let submittedAt: String
        /// How long the check's runs took; nil for a result stored before the class kept it.
        public let seconds: Double?
        /// The failing check's run, when the submission kept it.
        public let run: ComparisonResults.ExchangeTimeline?

        public init(student: String, exercise: String, check: String, status: CheckStatus, passed: Bool, attempted: Bool,
                    detail: String, submittedAt: String, seconds: Double?, run: ComparisonResults.ExchangeTimeline? = nil) {
            self.run = run
            self.seconds = seconds
            self.student = student
            self.exercise = exercise
            self.check = check
            self.status = status
            self.passed = passed
            self.attempted = attempted
            self.detail = detail
            self.submittedAt = submittedAt
        }
    }

    public struct Comparison: Sendable {
        public let student: String
        public let results: ComparisonResults

        public init(student: String, results: ComparisonResults) {
            self.student = student
            self.results = results
        }
    }

    /// Where a student stands on one check, in the words the page and the exports use.
    public enum Standing: String, Sendable, CaseIterable {
        case fixed
        case failing = "still failing"
        case doesNotCompile = "does not compile"
        /// Checked, but the code is still the starting code.
        case notStarted = "not started"
        /// A check the starting code passes too: whatever the code, it counts for nothing.
        case baseline
        case notRun = "not run"
    }

    private struct Key: Hashable {
        let student: String, exercise: String, check: String
    }

    private let cellsByKey: [Key: Cell]

    /// The latest result of a check, with the build's standing in for every check of an
    /// exercise that did not compile.
    public func cell(_ student: String, _ column: Column) -> Cell? {
        cellsByKey[Key(student: student, exercise: column.exercise, check: column.check)]
            ?? cellsByKey[Key(student: student, exercise: column.exercise, check: CheckRecord.buildCheck)]
    }

    /// Code identical to the starting code earns nothing: a check it passes, it passes for the
    /// article's author, not the student. Nor does any code earn a baseline, which the starting
    /// code passes: credit is for what the student changed.
    public func standing(_ student: String, _ column: Column) -> Standing {
        guard let cell = cell(student, column) else { return .notRun }
        if cell.status == .notRun { return .notRun }
        if column.baseline { return .baseline }
        if !cell.attempted { return .notStarted }
        if cell.status == .doesNotCompile { return .doesNotCompile }
        return cell.passed ? .fixed : .failing
    }

    /// The columns that earn credit: every one that is not a baseline.
    public var countedColumns: [Column] { columns.filter { !$0.baseline } }

    /// Whether the student has run the exercise's checks on code they changed.
    public func started(_ student: String, _ exercise: String) -> Bool {
        columns.contains { $0.exercise == exercise && cell(student, $0).map { $0.attempted && $0.status != .notRun } == true }
    }

    /// Whether every check of the exercise holds on the student's changed code, baselines too.
    public func isDone(_ student: String, _ exercise: String) -> Bool {
        let checks = columns.filter { $0.exercise == exercise }
        return started(student, exercise) && checks.allSatisfy { column in
            guard let cell = cell(student, column) else { return false }
            return cell.attempted && cell.status.isHeld
        }
    }
}
