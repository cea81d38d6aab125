/// A lesson as the tools see it, and its defects: what its `article` variant gets wrong, one
/// entry per defect. Its exercise is the article's code with all of them in it, and has one
/// check per defect. `lab compare`, `lab exercise` and the tests all read the lessons from here.
import LabPlatform
import LabVocabulary
public struct LessonDefects: Sendable {
    public let id: LessonID
    /// Arguments that pick the download itself out of a lesson whose default run also tells side
    /// stories, for `lab compare` (lesson 06's demonstrations take seconds and would swamp its
    /// numbers).
    public var compareArguments: [String] = []
    /// The corrected variant refuses a file bigger than this, on purpose (lesson 00's limit for
    /// a body held in memory).
    public var correctedRefusesAbove: Int64?
    /// Every defect, those that show only on Linux too: what the lesson page lists.
    public let everyDefect: [Defect]
    /// The defects a run on this system shows, which the checks and `lab compare` expect.
    public var defects: [Defect] { Platform.isLinux ? everyDefect : everyDefect.filter { $0.linuxOnly == nil } }
    /// What the lesson teaches, checked beside the defects.
    public let skills: [Skill]

    /// What LabKit gives the fix, a line each, for the exercise's header: the calls the article's
    /// code does not show, with their decisions and errors.
    public let tools: [String]

    init(_ id: LessonID, compareArguments: [String] = [], correctedRefusesAbove: Int64? = nil, defects: [Defect],
         skills: [Skill] = [], tools: [String] = []) {
        self.id = id
        self.compareArguments = compareArguments
        self.correctedRefusesAbove = correctedRefusesAbove
        everyDefect = defects
        self.skills = skills
        self.tools = tools
    }

    /// The fault-matrix columns where the catalogue expects the article variant to fail.
    public var failingScenarios: Set<Scenario> { Set(defects.flatMap(\.matrix)) }

    /// Whether an article run that failed in `scenario`, as `observation` shows, failed the way
    /// one of the defects says it does there.
    public func predicts(_ observation: Observation, in scenario: Scenario) -> Bool {
        defects.contains { $0.matrix.contains(scenario) && $0.symptom.isShown(in: observation) }
    }
}
