/// One check of one exercise, as `lab exercise check --json` prints it on a line and a class
/// server stores it. The fields are the contract a teacher's tools read (docs/exercises.md).
public struct CheckRecord: Codable, Sendable, Equatable {
    /// The lesson id: "03-outputstream".
    public var exercise: String
    /// The check's id ("resumes-after-kill"), or "build" when the code did not compile.
    public var check: String
    public var status: CheckStatus
    /// Whether the check holds, on code the student changed.
    public var passed: Bool
    /// Whether the starting code passes this check too: a baseline, which earns no credit
    /// whatever the code (credit is `passed` on a check that is not a baseline).
    public var baseline: Bool
    /// What happened, in one line.
    public var detail: String
    /// The command that shows it by hand.
    public var command: String
    public var seconds: Double
    /// Whether the run showed the symptom the check fails with.
    public var symptomSeen: Bool?
    /// Whether the code differs from the starting code: an exercise not started is not failing.
    public var attempted: Bool
    /// SHA-256 of the checked file's text.
    public var codeSHA256: String
    /// How many hints of this check the student has asked for.
    public var hintsShown: Int
    /// When the check ended, ISO 8601 in UTC.
    public var timestamp: String
    public var labVersion: String
    /// For a started exercise's failing check: its run's exchanges against time, without their
    /// headers, for the teacher's picture of where a student is stuck. Absent otherwise.
    public var exchanges: ComparisonResults.ExchangeTimeline?

    public init(exercise: String, check: String, status: CheckStatus, passed: Bool, baseline: Bool, detail: String, command: String,
                seconds: Double, symptomSeen: Bool?, attempted: Bool, codeSHA256: String, hintsShown: Int,
                timestamp: String, labVersion: String = LabVersion.current) {
        self.exercise = exercise
        self.check = check
        self.status = status
        self.passed = passed
        self.baseline = baseline
        self.detail = detail.shortened(to: Self.longestText)
        self.command = command.shortened(to: Self.longestText)
        self.seconds = seconds
        self.symptomSeen = symptomSeen
        self.attempted = attempted
        self.codeSHA256 = codeSHA256
        self.hintsShown = hintsShown
        self.timestamp = timestamp
        self.labVersion = labVersion
    }

    /// Whether the record earns credit: a check the starting code fails, holding on changed code.
    public var counts: Bool { passed && !baseline }

    /// The id a build failure's record carries in place of a check's.
    public static let buildCheck = "build"

    /// The most characters a detail or a command keeps: a record is made with them cut there,
    /// and a class server refuses longer ones, so one student's records cannot fill its page.
    public static let longestText = 1_000

    /// The most exchanges (and events) and disk samples a record's run keeps for a class server:
    /// a check's run makes a handful of requests and a few thousand samples at most.
    public static let mostExchanges = 200
    public static let mostDiskSamples = 10_000

    /// Every text field, as long as it may be; a class server refuses a record past these.
    public static let longestFields: [(name: String, length: @Sendable (CheckRecord) -> Int, limit: Int)] = [
        ("exercise", { $0.exercise.count }, 64), ("check", { $0.check.count }, 64),
        ("detail", { $0.detail.count }, longestText), ("command", { $0.command.count }, longestText),
        ("codeSHA256", { $0.codeSHA256.count }, 64), ("timestamp", { $0.timestamp.count }, 64), ("labVersion", { $0.labVersion.count }, 64),
    ]
}
