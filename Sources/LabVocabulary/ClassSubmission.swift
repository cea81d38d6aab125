/// What `--submit` sends to a class server (`lab class serve`): one student's results of one
/// `lab exercise check` or one `lab compare`. The same JSON is what waits in the outbox when
/// the server cannot be reached.
public struct ClassSubmission: Codable, Sendable, Equatable {
    /// Chosen by the student's lab when the run ends: a replay of the same submission carries
    /// the same id, and the server stores it once.
    public var id: String
    /// The name the student gave; `ClassSubmission.problem(withName:)` says which are allowed.
    public var name: String
    /// A random secret of the student's copy of the lab (kept in `.build/`): the first
    /// submission under a name claims it, and another copy cannot submit as that student.
    public var studentKey: String
    /// What `lab exercise check --json` printed; empty for a comparison.
    public var checks: [CheckRecord]
    /// What `lab compare` wrote to results.json; absent for exercise checks.
    public var comparison: ComparisonResults?
    /// When the run ended, ISO 8601 in UTC.
    public var createdAt: String
    public var labVersion: String

    public init(id: String, name: String, studentKey: String, checks: [CheckRecord], comparison: ComparisonResults?,
                createdAt: String, labVersion: String = LabVersion.current) {
        self.id = id
        self.name = name
        self.studentKey = studentKey
        self.checks = checks
        self.comparison = comparison
        self.createdAt = createdAt
        self.labVersion = labVersion
    }

    /// The most one submission may weigh as JSON: what the class server reads of one request, and
    /// what the outbox reads back of one file.
    public static let largestFile = 1 << 20

    /// Names longer than this are refused: a grid row has room for about this much.
    public static let longestName = 64

    /// Why a name is refused, in a few words; nil when it is allowed. Anything else a person
    /// may type is allowed: the page shows names as text, so markup in one stays text.
    public static func problem(withName name: String) -> String? {
        if name.allSatisfy(\.isWhitespace) { return "the name is empty" }
        if name.count > longestName { return "the name is longer than \(longestName) characters" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "the name has a control character in it"
        }
        if name.first?.isWhitespace == true || name.last?.isWhitespace == true { return "the name starts or ends with a space" }
        return nil
    }
}
