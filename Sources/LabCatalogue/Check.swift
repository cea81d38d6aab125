import LabVocabulary

/// One check of an exercise, as `lab exercise` runs it: the clean download, one per defect, and
/// one per skill the lesson teaches. Each runs its trial and judges the run from outside.
public struct Check: Sendable {
    public enum Kind: Sendable, Equatable {
        /// A clean 1 MiB download, which must verify: a program that refuses every download fixes nothing.
        case clean
        /// What one of the article's defects breaks.
        case defect
        /// What the lesson teaches, whatever the article gets wrong.
        case skill
    }

    public let id: String
    public let kind: Kind
    /// One line: what the check is about. The hint tells it; the ✗ line does not.
    public let summary: String
    public let trial: Trial
    /// What the run shows when the check fails; nil when a run that does not fix it shows nothing more.
    public let symptom: Symptom?
    public let fix: Fix
    /// From the symptom, to the cause, to the fix.
    public let hints: [String]
    /// Where the defect comes from; nil for the clean download and the skills.
    public let source: ArticleSection?
    /// The most bytes the server may send a run that holds: the trial's budget and the bytes in
    /// flight at its breaks (`Trial.bytesNeeded`); nil where bytes are not bounded.
    public let bytesAllowed: Int64?
    /// The most requests the server may see in a run that holds (`Trial.requestsNeeded`); nil
    /// where requests are not bounded.
    public let requestsAllowed: Int?
    /// What shows the run failed by the check's defect (`Defect.cause`); nil for the others.
    public let cause: Cause?
    private let budget: Budget
    /// Whether the lesson names its file only once it is whole (`LessonID.namesOnlyWholeFiles`).
    private let namesOnlyWholeFiles: Bool

    /// The clean download's check is named after its scenario.
    public static let cleanID = Scenario.clean.rawValue

    static func clean(_ lesson: LessonID, budget: Budget) -> Check {
        let size: Int64 = 1 << 20
        let trial = Trial(faults: lesson.fetchesInSegments ? FaultScript.none.pacedPerConnection(forFileOf: size) : .none, size: size)
        let command = trial.commandLine(executable: lesson.exerciseExecutable)
        return Check(
            id: cleanID, kind: .clean, summary: "a clean download must verify", trial: trial,
            symptom: nil, fix: .verifies,
            hints: [
                "Run it with no fault and read what it says: \(command)",
                "Its last line names what went wrong; the lesson's corrected variant (`--variant corrected` on the lesson) shows what a clean run prints.",
                "A change that refuses or breaks every download makes every other check meaningless: undo it, then fix one check at a time.",
            ],
            source: nil, budget: budget, namesOnlyWholeFiles: lesson.namesOnlyWholeFiles)
    }

    init(_ defect: Defect, of lesson: LessonID) {
        self.init(id: defect.id, kind: .defect, summary: defect.summary, trial: defect.trial, symptom: defect.symptom,
                  fix: defect.fix, hints: defect.hints, source: defect.source, cause: defect.cause, budget: lesson.budget,
                  namesOnlyWholeFiles: lesson.namesOnlyWholeFiles)
    }

    init(_ skill: Skill, of lesson: LessonID) {
        self.init(id: skill.id, kind: .skill, summary: skill.summary, trial: skill.trial, symptom: skill.symptom,
                  fix: skill.fix, hints: skill.hints, source: nil, budget: lesson.budget, namesOnlyWholeFiles: lesson.namesOnlyWholeFiles)
    }

    init(id: String, kind: Kind, summary: String, trial: Trial, symptom: Symptom?, fix: Fix, hints: [String], source: ArticleSection?,
         cause: Cause? = nil, budget: Budget, namesOnlyWholeFiles: Bool) {
        self.namesOnlyWholeFiles = namesOnlyWholeFiles
        self.cause = cause
        self.id = id
        self.kind = kind
        self.summary = summary
        self.trial = trial
        self.symptom = symptom
        self.fix = fix
        self.hints = hints
        self.source = source
        self.budget = budget
        bytesAllowed = trial.bytesNeeded(budget).map { $0 + trial.bytesInFlightAllowed(budget) }
        requestsAllowed = trial.requestsNeeded(budget)
    }

    /// This check with its trial as `seed` varies it, and the bytes allowed reckoned again.
    public func varied(by seed: CheckSeed) -> Check {
        Check(id: id, kind: kind, summary: summary, trial: trial.varied(by: seed, for: id), symptom: symptom, fix: fix, hints: hints,
              source: source, cause: cause, budget: budget, namesOnlyWholeFiles: namesOnlyWholeFiles)
    }

    /// Whether the run is what the check asks for.
    public func holds(in observation: Observation) -> Bool {
        fix.holds(in: observation, despite: symptom) && !isOverBudget(observation) && !isOverRequests(observation)
            && !leavesAPartUnderTheName(observation)
            && !observation.startedAProgram && observation.uploadsAroundTheSession == 0
    }

    /// Whether a lesson that names only whole files left part of one under its name at a kill.
    public func leavesAPartUnderTheName(_ observation: Observation) -> Bool {
        namesOnlyWholeFiles && observation.partUnderTheNameAtTheKill
    }

    /// Whether a run that verified was sent more than the check allows: a right file reached by
    /// fetching it again until it came out right.
    public func isOverBudget(_ observation: Observation) -> Bool {
        guard observation.verified, let allowed = bytesAllowed, let sent = observation.bytesSent else { return false }
        return sent > allowed
    }

    /// Whether a run that verified sent more requests than the check allows: a task cancelled
    /// and resumed again and again, where the user pressed Pause once.
    public func isOverRequests(_ observation: Observation) -> Bool {
        guard observation.verified, let allowed = requestsAllowed, let sent = observation.requestsSent else { return false }
        return sent > allowed
    }

    /// What the check found, for a run that ended by itself (not hung, not crashed).
    public func status(holding: Bool) -> CheckStatus {
        switch kind {
        case .clean: holding ? .verifies : .fails
        case .defect: holding ? .fixed : .stillThere
        case .skill: holding ? .holds : .fails
        }
    }
}

extension LessonDefects {
    /// Every check of the exercise, in the order they run: clean, the defects, the skills.
    public var checks: [Check] {
        [cleanCheck] + defects.map { Check($0, of: id) } + skills.map { Check($0, of: id) }
    }

    /// The clean download: bounded by bytes unless the lesson's default run also tells side
    /// stories (lesson 06's cases), whose own transfers are no waste.
    private var cleanCheck: Check { Check.clean(id, budget: compareArguments.isEmpty ? id.budget : .none) }

    public func check(named name: String) -> Check? { checks.first { $0.id == name } }

    /// Every check on any system, those of defects that show only on Linux too: the columns of
    /// a class's grid, whose students may run the lab on Macs and on Linux.
    public var everyCheck: [Check] {
        [cleanCheck] + everyDefect.map { Check($0, of: id) } + skills.map { Check($0, of: id) }
    }

    /// The check named `name`, or a line for the student that lists the checks there are.
    public func check(mustBeNamed name: String) throws(NoSuchCheck) -> Check {
        guard let check = check(named: name) else {
            throw NoSuchCheck(description: "exercise \(id.number) has no check \"\(name)\"; its checks are \(checks.map(\.id).joined(separator: ", "))")
        }
        return check
    }

    /// The checks the exercise's starting code fails: every defect's, the clean download's when a
    /// defect shows in the clean scenario (lesson 07's extra bytes), and each skill a defect
    /// breaks.
    public var failingAtStart: Set<String> { Self.failing(withDefects: defects, skills: skills) }

    /// The checks that earn credit when they hold: those the starting code fails, on some system.
    /// Every other check is a baseline, which the starting code passes too: a student who adds a
    /// comment, or changes nothing, earns none of it (docs/exercises.md, "What counts").
    public var countedChecks: Set<String> { Self.failing(withDefects: everyDefect, skills: skills) }

    /// Whether `check` is one the starting code passes: shown as a baseline, never counted.
    public func isBaseline(_ check: String) -> Bool { !countedChecks.contains(check) }

    private static func failing(withDefects defects: [Defect], skills: [Skill]) -> Set<String> {
        let present = Set(defects.map(\.id))
        return present
            .union(defects.contains { $0.matrix.contains(.clean) } ? [Check.cleanID] : [])
            .union(skills.filter { !present.isDisjoint(with: $0.brokenBy) }.map(\.id))
    }
}

/// A check named that the exercise does not have.
public struct NoSuchCheck: Error, CustomStringConvertible {
    public let description: String
}
