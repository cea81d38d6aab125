import Foundation
import LabVocabulary
import LabCatalogue
import LabHarness
import LabKit
import LabServer

/// One lesson's checks against one program: a clean download first, then one check per defect
/// and one per skill the lesson teaches (`LessonDefects.checks`).
struct ExerciseCheck {
    let lesson: LessonDefects
    let runner: TrialRunner
    /// How the student reproduces a check by hand: the exercise's executable, or the lesson's.
    let executable: String
    /// `--variant`, when a lesson's own variant is checked: `see` commands name it too.
    var variant: Variant?
    /// What every check's trial is varied by.
    let seed: CheckSeed
    /// `--only`: the checks run, after the clean one; nil for every one.
    var only: Set<String>? = nil

    /// The checks this run makes, in order, as the seed varies them: the clean one always first.
    var checks: [Check] {
        lesson.checks.filter { check in check.kind == .clean || only.map { $0.contains(check.id) } ?? true }.map { $0.varied(by: seed) }
    }

    struct Outcome: Codable {
        var exercise: String
        var check: String
        var status: CheckStatus
        /// What happened, in one line: what fails first, then the exit and the file.
        var detail: String
        /// The command that shows it by hand.
        var command: String
        var seconds: Double
        /// Whether the run showed the symptom the check fails with.
        var symptomSeen: Bool?

        /// Whether the check holds; in the JSON as `passed`.
        var passed: Bool
        /// The run's exchanges against time, for the record of a check that fails.
        var exchanges: ComparisonResults.ExchangeTimeline? = nil
    }

    /// Runs every check, calling `report` in the checks' order as each ends. The clean download
    /// runs first and alone: its peak is the memory checks' baseline, and a program that hangs
    /// there costs one timeout. The others then run `concurrentChecks` at a time: each has its
    /// own URL token and folder, and most of a check is waiting (for a drop, a stall, a kill,
    /// the phone's time for a handler). Once a run has timed out, the checks not yet started are
    /// not run.
    func run(report: (Outcome) -> Void) -> [Outcome] {
        let checks = checks
        let (clean, cleanPeak) = outcome(of: checks[0], cleanPeak: nil)
        report(clean)
        var outcomes = [clean]
        let hung = "not run: the program timed out in an earlier check"
        WorkInOrder.run(Array(checks.dropFirst()), width: Self.concurrentChecks, work: { check, stopped in
            if stopped || clean.status == .timedOut { return (notRun(check, because: hung), false) }
            let outcome = outcome(of: check, cleanPeak: cleanPeak).outcome
            return (outcome, outcome.status == .timedOut)
        }, each: { outcome in
            report(outcome)
            outcomes.append(outcome)
        })
        return outcomes
    }

    /// Four at a time took exercise 09's check with its handler never called from 42 s, one
    /// by one, to 17 s: each of its checks waits 5 s for a handler. Downloads of 1 to 96 MiB
    /// four at a time on 2 cores stay far inside the 30 s a run may take.
    static let concurrentChecks = 4

    private func notRun(_ check: Check, because detail: String) -> Outcome {
        Outcome(exercise: lesson.id.rawValue, check: check.id, status: .notRun, detail: detail,
                command: command(for: check), seconds: 0, passed: false)
    }

    /// One check, judged; with the run's peak, which the clean check gives the memory checks.
    private func outcome(of check: Check, cleanPeak: Int64?) -> (outcome: Outcome, peak: Int64?) {
        var outcome = notRun(check, because: "")
        do {
            let ran = try run(check, cleanPeak: cleanPeak)
            outcome.seconds = ran.seconds
            (outcome.status, outcome.passed, outcome.detail, outcome.symptomSeen) = Self.judge(ran.observation, by: check)
            outcome.exchanges = ran.exchanges
            return (outcome, ran.memoryBaseline)
        } catch {
            outcome.detail = "not run: \(error)"
            return (outcome, nil)
        }
    }

    /// One check's run; `showing` overrides the runner's for it, and `drawing` keeps its exchanges.
    func run(_ check: Check, cleanPeak: Int64?, showing: Bool? = nil, drawing: Bool = false) throws -> TrialRunner.Ran {
        var runner = runner
        if let showing { runner.showing = showing }
        runner.paces = drawing
        return try runner.run(check.trial, cleanPeakRSS: check.symptom?.measuresMemory == true ? cleanPeak : nil)
    }

    /// The same check on `lesson`, the lesson's own program, as its corrected variant, unshown:
    /// what right looks like beside the student's run.
    func runCorrected(_ check: Check, lesson program: URL) throws -> TrialRunner.Ran {
        var runner = TrialRunner(server: runner.server, program: program, extraArguments: ["--variant", Variant.corrected.rawValue],
                                 lesson: lesson.id, workFolder: runner.workFolder, timeout: runner.timeout)
        runner.paces = true
        return try runner.run(check.trial, cleanPeakRSS: nil)
    }

    /// The status, whether it holds, the line, and whether the symptom showed.
    static func judge(_ observation: Observation, by check: Check) -> (CheckStatus, Bool, String, Bool?) {
        let detail = describe(observation, for: check)
        let seen = check.symptom?.isShown(in: observation)
        switch observation.ending {
        case .timedOut: return (.timedOut, false, detail, seen)
        case .signal(let signal) where signal != SIGKILL: return (.crashed, false, detail, seen)
        default:
            let holds = check.holds(in: observation)
            if holds, let symptom = check.symptom, !symptom.isReached(in: observation) {
                return (.notReached, false, "not reached: \(symptom.notReachedBecause); \(detail)", seen)
            }
            if !holds, check.kind == .defect, let cause = check.cause, !cause.isEvident(in: observation) {
                return (.fails, false, "\(cause.absentBecause(in: observation)); \(detail)", seen)
            }
            return (check.status(holding: holds), holds, detail, seen)
        }
    }

    /// How to see a check by hand. A one-run check is the program with the trial's size and
    /// faults, against its embedded server. A check that runs the program twice needs one server
    /// that keeps its address across both runs, and a kill at the right moment: `lab exercise
    /// see` does both and shows each command it runs.
    func command(for check: Check) -> String {
        guard check.trial.sequel.runsTwice else { return check.trial.commandLine(executable: executable) }
        return "swift run lab exercise see \(lesson.id.number) \(check.id) --seed \(seed)" + (variant.map { " --variant \($0.rawValue)" } ?? "")
    }

    /// What a run did, for the check at hand, with what fails first: "the request after the drop
    /// asked for no Range: 4,194,304 bytes came twice (at most 1 MiB may); exit 0, the file is right".
    static func describe(_ observation: Observation, for check: Check) -> String {
        let trial = check.trial
        switch observation.ending {
        case .timedOut(let seconds): return "timed out: still running after \(seconds) s, stopped"
        case .signal(let signal) where signal != SIGKILL: return "crashed (signal \(signal))"
        default: break
        }
        // The check's own figures come first: they say why it fails; before them, a record
        // that could not be read, which hides most of what the run did.
        var parts = observation.recordProblem.map { [$0] } ?? []
        parts += symptomFigure(observation, for: check).map { [$0] } ?? []
        if check.isOverBudget(observation), let allowed = check.bytesAllowed {
            parts.append("the server sent \(ByteFormat.grouped(observation.bytesSent ?? 0)) bytes where at most "
                + "\(ByteFormat.grouped(allowed)) would do: the file was fetched again rather than each answer judged before it was written")
        }
        if check.isOverRequests(observation), let allowed = check.requestsAllowed {
            parts.append("the server saw \(observation.requestsSent ?? 0) requests where at most \(allowed) would do: the task was cancelled "
                + "and resumed again and again, where the user pressed Pause once; a download task runs until Pause or a break, "
                + "and a break's error carries its own resume data")
        }
        if check.leavesAPartUnderTheName(observation) {
            parts.append("at the kill, \(observation.resourceName) held \(observation.fileAtTheKill.map { $0.described(size: observation.size) } ?? "?"): "
                + "a download task keeps its bytes in a temporary file of its own, and the file's name is given only to the whole file")
        }
        if observation.startedAProgram {
            parts.append("the program started another program (a child process): an iOS app cannot, and the check judges what the app's own code does")
        }
        if observation.uploadsAroundTheSession > 0 {
            let count = observation.uploadsAroundTheSession
            parts.append("the server received \(count) upload\(count == 1 ? "" : "s") the program's URLSession never sent: "
                + "the exercise is the request an app's URLSession sends, so it goes through the session the lab hands the code")
        }
        if observation.stopMissesTheStatus, let status = observation.statusAnswered {
            parts.append("the server answered HTTP \(status) and the program's error does not say so (\"\(observation.errorMessage ?? "no message")\"): "
                + "a stop on an error status names it, which only code that read the status can")
        }
        if case .stopsThenRerunVerifies(let wanted) = check.fix, let first = observation.firstEnding, first != .exited(wanted.rawValue) {
            parts.append("the first run ended \(ending(first)), wanted \(wanted.described)")
        }
        let stopWanted: ExitStatus? = if case .verifiesOrStops(let status) = check.fix { status } else { nil }
        parts.append(ending(observation.ending, outcome: observation.outcome, wanted: stopWanted))
        let file = observation.file.described(size: observation.size)
        parts.append(observation.uploadExtraBytes == nil ? file : "the server stored the file: \(file)")
        let fault = trial.faults.isNone ? (trial.arguments.isEmpty ? "no fault" : trial.arguments.joined(separator: " ")) : trial.faults.description
        // A first run that already failed is the one shown: there was no second.
        let sequel = switch trial.sequel {
        case _ where trial.sequel.runsTwice && observation.firstEnding == nil: ", the first run"
        case .none: ""
        case .rerun: ", run twice"
        case .killAndRerun: ", killed at the stall and run again"
        case .killAndRerunAtAnotherURL: ", killed at the stall and run again at another URL (the first one still answering, with its file changed)"
        case .killAndRerunAsANewInstall: ", killed at the stall and run again as a new install (another output folder, the same TMPDIR)"
        }
        return "\(fault)\(sequel): " + parts.joined(separator: "; ")
    }

    /// What the run showed of the check's own symptom, when it showed it: the figure that says
    /// why the check fails.
    private static func symptomFigure(_ observation: Observation, for check: Check) -> String? {
        switch check.symptom {
        case .startsOver?:
            guard Symptom.startsOver.isShown(in: observation), let resume = observation.afterTheBreak else { return nil }
            return ("the request after the \(check.trial.sequel.kills ? "kill" : "break") asked for "
                + (resume.range ?? "no Range") + ": \(ByteFormat.grouped(resume.fetchedAgain)) bytes came twice "
                + "(at most \(Symptom.wasteAllowed >> 20) MiB may)")
        case .holdsInMemory?:
            if let growth = observation.memoryGrowth {
                return (String(format: "peak memory %.1f× the file above a clean 1 MiB run", max(0, growth)))
            }
        case .sendsHEAD? where observation.sentHEAD:
            return ("sent HEAD requests")
        case .fetchesAgain(let requestsAllowed)? where Symptom.fetchesAgain(requestsAllowed: requestsAllowed).isShown(in: observation):
            let requests = observation.requestsSent ?? 0
            return ("\(requests) request\(requests == 1 ? "" : "s") in all\(requestsAllowed.map { " (at most \($0) may)" } ?? ""), "
                + "and the server sent \(ByteFormat.grouped(observation.bytesSent ?? 0)) bytes for a \(ByteFormat.grouped(observation.size))-byte file")
        case .bodyWhenCurrent(let requestsAllowed)? where Symptom.bodyWhenCurrent(requestsAllowed: requestsAllowed).isShown(in: observation):
            let requests = observation.requestsSent ?? 0
            return ("\(requests) request\(requests == 1 ? "" : "s") in all (at most \(requestsAllowed) may), and the server sent "
                + "\(ByteFormat.grouped(observation.bytesSent ?? 0)) body bytes for a \(ByteFormat.grouped(observation.size))-byte file it had "
                + "to send once: a current file gets a 304, with no body")
        case .misnamesTheFile? where observation.file == .right && observation.fileName != observation.resourceName:
            return ("saved as \(observation.fileName ?? "?"), not \(observation.resourceName)")
        case .misreportsProgress(let totalAnnounced)? where Symptom.misreportsProgress(totalAnnounced: totalAnnounced).isShown(in: observation):
            return progressFigure(observation)
        case .doesNotResume? where Symptom.doesNotResume.isShown(in: observation) && !observation.claimedDone:
            if let resume = observation.afterTheBreak {
                return ("the request after the break asked for \(resume.range ?? "no Range") and got \(resume.status.map(String.init) ?? "no answer"), "
                    + "not a 206 continuing the file")
            }
        case .breaksBackgroundRule(let rule)? where rule.isBroken(in: observation):
            return (Self.describe(rule, in: observation))
        case .notSideBySide(let ranges)? where Symptom.notSideBySide(ranges: ranges).isShown(in: observation):
            let atOnce = observation.mostAtOnce ?? 0
            return ("the server sent to at most \(atOnce) GET\(atOnce == 1 ? "" : "s") at once, and one answer carried "
                + "\(ByteFormat.grouped(observation.largestBody ?? 0)) of the \(ByteFormat.grouped(observation.size)) bytes "
                + "(\(ranges) ranges side by side: about \(ByteFormat.grouped(observation.size / Int64(ranges))) each)")
        case .roundTrips(let allowed)? where Symptom.roundTrips(moreThan: allowed).isShown(in: observation):
            let requests = observation.requestsSent ?? 0
            let methods = observation.sentHEAD ? ", HEADs among them" : ""
            return ("\(requests) requests in all\(methods) (at most \(allowed) may: one per launch)")
        case .starvesTheGlobalQueue? where observation.crowd.map { $0.fetched < $0.wanted } == true:
            let crowd = observation.crowd!
            return ("the server sent the whole file to \(crowd.fetched) of the crowd's \(crowd.wanted) other transfers: "
                + "under --way crowd the download and one more transfer per core run at once")
        case .resumesAnotherInstall? where Symptom.resumesAnotherInstall.isShown(in: observation):
            return ("the new install's first request asked for \(observation.afterTheBreak?.range ?? "a Range"): "
                + "it found what the first install kept outside its own folders")
        case .ignoresRetryAfter? where Symptom.ignoresRetryAfter.isShown(in: observation):
            let early = observation.askedBeforeRetryAfter ?? 0
            return ("\(early) range\(early == 1 ? " was" : "s were") asked for again before the 503's Retry-After had passed")
        default:
            break
        }
        return nil
    }

    /// How a run's progress reports were wrong.
    private static func progressFigure(_ observation: Observation) -> String {
        if let highest = observation.progress?.highestPercent, highest > 100 {
            return String(format: "progress reached %.0f%%", highest)
        }
        if let total = observation.progress?.totals.first(where: { $0 != observation.size }) {
            return "progress was reckoned against \(ByteFormat.grouped(total)) bytes, not the file's \(ByteFormat.grouped(observation.size))"
        }
        return observation.progress?.reports ?? 0 > 0 ? "no report gave the total, though a response announced it" : "no progress was reported"
    }


    /// What the phone saw of a broken rule: "the system relaunched the app once, and its events
    /// were still waiting when it went quiet".
    static func describe(_ rule: BackgroundRule, in observation: Observation) -> String {
        guard let life = observation.background, life.backgroundTasks > 0 else {
            return "no background session: the transfer service was given no task"
        }
        switch rule {
        case .downloadOutlivesTheApp:
            let twice = max(0, (observation.bytesSent ?? 0) - observation.size)
            return life.relaunchesForEvents + life.wakes == 0
                ? "the system never relaunched the app for its download"
                : "\(ByteFormat.grouped(twice)) bytes were sent twice (at most \(Symptom.wasteAllowed >> 20) MiB may)"
        case .fileMovedBeforeReturn:
            return "the session handed over \(life.filesHandedOver) file\(life.filesHandedOver == 1 ? "" : "s"), and none was kept"
        case .sessionMadeAtLaunch:
            return "after \(life.launchesWithEventsLeft) relaunch\(life.launchesWithEventsLeft == 1 ? "" : "es") for events, the events were still waiting"
        case .completionHandlerCalled:
            return life.handlersNeverCalled > 0 ? "the completion handler was never called"
                : life.handlersOffTheMainQueue > 0 ? "the completion handler was called off the main queue"
                : "the completion handler was called before the session had delivered its events (urlSessionDidFinishEvents)"
        case .forceQuitNotRetried:
            return life.forceQuits == 0
                ? "no force-quit was played"
                : "\(life.tasksStartedUnaskedAfterForceQuit) download\(life.tasksStartedUnaskedAfterForceQuit == 1 ? "" : "s") began after the force-quit, before any tap on Start"
        case .oneSessionPerIdentifier:
            return "\(life.mostSessionsPerIdentifier) sessions with one identifier in one launch"
        case .oneDownloadAtATime:
            return "\(life.backgroundTasks) downloads were given to the transfer service: Start began another while one was running"
        case .resumesWithALimit:
            return "\(life.backgroundTasks) download tasks for \(max(1, life.launchesByUser)) tap\(life.launchesByUser > 1 ? "s" : "") on Start "
                + "(at most \(BackgroundRule.tasksForOneStart) each): every failure was resumed again"
        }
    }

    /// "exit 74 (io-failed), wanted exit 69 (transfer-failed) or a file that verifies"; "exit 65: it
    /// called the file done, and LabKit's check of it failed".
    private static func ending(_ ending: Observation.Ending, outcome: LabVocabulary.Outcome?, wanted: ExitStatus?) -> String {
        guard case .exited(let status) = ending else { return Self.ending(ending) }
        if outcome == .verificationFailed { return "exit 65: it called the file done, and LabKit's check of it failed" }
        var said = "exit \(status)" + (outcome.map { " (\($0.rawValue))" } ?? ", no JSON record")
        if let wanted, status != 0, status != wanted.rawValue {
            said += ", wanted \(wanted.described) or a file that verifies"
        }
        return said
    }

    private static func ending(_ ending: Observation.Ending) -> String {
        switch ending {
        case .exited(let status): "with exit \(status)"
        case .signal(let signal): signal == SIGKILL ? "killed" : "with signal \(signal)"
        case .timedOut(let seconds): "timed out after \(seconds) s"
        }
    }
}

