import Foundation
import LabVocabulary
import LabCatalogue
import LabKit
import LabServer

/// One lesson's checks against one program: a clean download first, which must verify (a
/// program that refuses every download fixes nothing), then one check per defect.
struct ExerciseCheck {
    let lesson: LessonDefects
    let runner: TrialRunner
    /// How the student reproduces a check by hand.
    let executable: String

    /// The clean download every exercise starts with.
    /// The clean download's check is named after its scenario.
    static let cleanCheck = Scenario.clean.rawValue
    static let cleanTrial = Trial(faults: "", size: 1 << 20)

    struct Outcome: Codable {
        var exercise: String
        var check: String
        var summary: String
        var status: CheckStatus
        /// What happened, in one line: the fault, the exit, the file.
        var detail: String
        /// The command that shows it by hand.
        var command: String
        var seconds: Double
        /// For a defect: whether the run showed the symptom the catalogue gives for it.
        var symptomSeen: Bool?

        /// Whether the check holds; in the JSON as `passed`.
        var passed: Bool
    }

    /// Runs every check, calling `report` as each ends. After a run that timed out the rest are
    /// not run, so a program that hangs costs one timeout, not one per check.
    func run(report: (Outcome) -> Void) -> [Outcome] {
        var outcomes: [Outcome] = []
        var cleanPeak: Int64?
        var hung = false
        let checks: [(id: String, summary: String, trial: Trial, defect: Defect?)] =
            [(Self.cleanCheck, "a clean download must verify", Self.cleanTrial, nil)]
            + lesson.defects.map { ($0.id, $0.summary, $0.trial, $0) }
        for check in checks {
            let command = Self.command(for: check.trial, executable: executable)
            var outcome = Outcome(exercise: lesson.lesson, check: check.id, summary: check.summary, status: .notRun,
                                  detail: "", command: command, seconds: 0, passed: false)
            if hung {
                outcome.detail = "not run: the program timed out in an earlier check"
            } else {
                do {
                    let ran = try runner.run(check.trial, name: "\(lesson.number)-\(check.id)", cleanPeakRSS: check.defect?.symptom.measuresMemory == true ? cleanPeak : nil)
                    if check.id == Self.cleanCheck { cleanPeak = ran.peakRSSBytes }
                    outcome.seconds = ran.seconds
                    outcome.detail = Self.describe(ran.observation, trial: check.trial, symptom: check.defect?.symptom)
                    outcome.symptomSeen = check.defect?.symptom.isShown(in: ran.observation)
                    switch ran.observation.ending {
                    case .timedOut:
                        outcome.status = .timedOut
                        hung = true
                    case .signal(let signal) where signal != SIGKILL:
                        outcome.status = .crashed
                    default:
                        let holds = check.defect.map { $0.fix.holds(in: ran.observation, despite: $0.symptom) }
                            ?? ran.observation.verified
                        outcome.passed = holds
                        outcome.status = check.defect == nil ? (holds ? .verifies : .fails) : (holds ? .fixed : .stillThere)
                    }
                } catch {
                    outcome.detail = "not run: \(error)"
                }
            }
            report(outcome)
            outcomes.append(outcome)
        }
        return outcomes
    }

    /// How to see a check by hand. A check that runs the program twice needs the same URL both
    /// times, and the embedded server listens on a new port in every run: that one goes through
    /// `lab serve`. Its attempt counter belongs to the URL: to see it again, change `run=`.
    static func command(for trial: Trial, executable: String) -> String {
        guard trial.sequel != .none else { return trial.commandLine(executable: executable) }
        var url = "http://127.0.0.1:8080/fixtures/see-it?size=\(trial.size)"
        if !trial.faults.isNone { url += "&faults=\(trial.faults)" }
        url += "&run=1"
        let first = (["swift run \(executable)", "--url '\(url)'", "--output /tmp/f"] + trial.arguments).joined(separator: " ")
        let then = trial.arguments.isEmpty ? "the same command again" : "it again without \(trial.arguments.joined(separator: " "))"
        return switch trial.sequel {
        case .none, .rerun: "with `swift run lab serve` running: \(first), then \(then)"
        case .killAndRerun: "with `swift run lab serve` running: \(first), kill -9 it when its progress stops at the stall, then \(then)"
        }
    }

    /// "drop at 40%, then ok: exit 65, it said it was done; 1,677,721 bytes too long (5,872,025 for 4,194,304)".
    static func describe(_ observation: Observation, trial: Trial, symptom: Symptom?) -> String {
        var parts: [String] = []
        switch observation.ending {
        case .timedOut(let seconds): return "timed out: still running after \(seconds) s, stopped"
        case .signal(let signal) where signal != SIGKILL: return "crashed (signal \(signal))"
        case .signal: parts.append("killed")
        case .exited(let status):
            let said = switch observation.outcome {
            case .verificationFailed: ", it said it was done"
            case nil: ", no JSON record"
            case let outcome?: " (\(outcome.rawValue))"
            }
            parts.append("exit \(status)\(said)")
        }
        let file = observation.file.described(size: observation.size)
        parts.append(observation.uploadExtraBytes == nil ? file : "the server stored the file: \(file)")
        // Only what the check is about: other figures would read as more failures.
        switch symptom {
        case .downloadsAgain?:
            parts.append(String(format: "%.0f%% of the file downloaded twice", observation.downloadedAgainShare * 100))
        case .holdsInMemory?:
            if let growth = observation.memoryGrowth {
                parts.append(String(format: "peak memory %.1f× the file above a clean 1 MiB run", max(0, growth)))
            }
        case .sendsHEAD? where observation.sentHEAD:
            parts.append("sent HEAD requests")
        case .misnamesTheFile? where observation.file == .right && observation.fileName != observation.resourceName:
            parts.append("saved as \(observation.fileName ?? "?"), not \(observation.resourceName)")
        default:
            break
        }
        let fault = trial.faults.isNone ? (trial.arguments.isEmpty ? "no fault" : trial.arguments.joined(separator: " ")) : trial.faults.description
        return "\(fault): " + parts.joined(separator: "; ")
    }
}
