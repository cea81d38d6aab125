import ArgumentParser
import Dispatch
import Foundation
import LabCatalogue
import LabHarness
import LabKit
import LabReport
import LabPlatform
import LabServer
import LabVocabulary

/// One `check` of one exercise: build, run the checks, print, remember.
struct ExerciseRun {
    let lesson: LessonDefects
    let workspace: ExerciseWorkspace
    /// Set to check the lesson's own variant instead of the student's code.
    let variant: Variant?
    let json: Bool
    let build: ExerciseBuildOptions
    /// What the checks' trials are varied by, printed so that `--seed` plays them again.
    let seed: CheckSeed
    var timeout = TrialRunner.defaultTimeout
    /// `--only`: these checks alone, after the clean one; the exercise's state is not touched.
    var only: Set<String>? = nil

    private var product: String { variant == nil ? lesson.id.exerciseExecutable : lesson.id.executable }

    /// The code checked: the student's file, or the lesson's variant.
    private var code: String {
        guard let variant else { return workspace.studentCode(lesson) ?? "" }
        let file = workspace.root.appendingPathComponent(ExerciseSource.lessonFolder(for: lesson))
            .appendingPathComponent(variant == .article ? "Article.swift" : "Corrected.swift")
        return (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    }

    /// Builds and checks the code; returns a record per check. Code that does not compile gives
    /// one record (check "build"), printed as a line on stderr when `continuing`, else thrown.
    func check(continuing: Bool = false) throws -> [CheckRecord] {
        let code = code
        let facts = recordFacts(code: code)
        let program: URL
        do {
            if variant == nil, let problem = try workspace.alteredSupportProblem(lesson) { throw ExerciseError.failure(problem) }
            program = try ExerciseBuild.build(product: product, in: workspace.root, ignoringLock: build.ignoringLock)
        } catch let error as ExerciseError {
            let message = error.description
            // For people, the compiler's whole first error: its code excerpt and its notes.
            if !json, case .doesNotCompile(let diagnostic) = error { Console.output(diagnostic.text) }
            if variant == nil, only == nil { remember([], code: code, compiles: false) }
            let outcome = ExerciseCheck.Outcome(exercise: lesson.id.rawValue, check: CheckRecord.buildCheck, status: .doesNotCompile,
                                                detail: message, command: "swift build --product \(product)", seconds: 0, passed: false)
            if json {
                emit(facts.record(outcome))
            } else if continuing {
                Console.error("exercise \(lesson.id.number): \(message)")
            } else {
                throw ExerciseError.failure(message)
            }
            return [facts.record(outcome)]
        }

        if !json, variant == nil, Platform.isLinux {
            for note in StricterOnAMac.notes(in: code, path: ExerciseSource.path(for: lesson), lesson: lesson.id) { Console.output("note: " + note) }
        }
        var records: [CheckRecord] = []
        let outcomes = try withChecks(program: program, showing: false) { checks in
            if !json {
                let what = variant.map { "the lesson's \($0.rawValue) variant (\(product))" } ?? ExerciseSource.path(for: lesson)
                Console.output("Exercise \(lesson.id.number), \(what): \(checks.checks.count) checks, seed \(seed) "
                    + "(`--seed \(seed)` plays these runs again)")
            }
            let width = checks.checks.map(\.id.count).max()!
            return checks.run { outcome in
                let record = facts.record(outcome)
                records.append(record)
                if json { emit(record) } else { show(outcome, nameWidth: width, started: facts.attempted) }
            }
        }
        if variant == nil, only == nil { remember(outcomes.filter { !$0.passed }.map(\.check), code: code, compiles: true, total: outcomes.count) }
        if !json, !facts.attempted {
            Console.output("not started: \(ExerciseSource.path(for: lesson)) is still the starting code, so no check counts yet; "
                           + "the ✗ lines are where to begin.")
        } else if !json {
            let failing = outcomes.filter { !$0.passed }.count
            let counted = outcomes.filter { !lesson.isBaseline($0.check) }
            let credit = "\(counted.filter(\.passed).count) of the \(counted.count) checks the starting code fails now hold"
            Console.output(failing == 0
                ? "done: every check holds; \(credit)." + (variant == nil ? " `swift run lab exercise` shows the next one." : "")
                : "\(failing) of \(outcomes.count) checks fail; \(credit)." + (variant == nil ? " A hint: swift run lab exercise hint \(lesson.id.number)" : ""))
        }
        return records
    }

    /// `lab exercise see`: one check, with each command and the program's story shown as it runs.
    /// On the starting code it holds nothing, as in `check`.
    func see(_ declared: LabCatalogue.Check) throws -> ExerciseCheck.Outcome {
        let check = declared.varied(by: seed)
        let started = recordFacts(code: code).attempted
        var picture: URL?
        if variant == nil, let problem = try workspace.alteredSupportProblem(lesson) { throw ExerciseError.failure(problem) }
        let program = try ExerciseBuild.build(product: product, in: workspace.root, ignoringLock: build.ignoringLock)
        let outcome = try withChecks(program: program, showing: true) { checks in
            Console.output("\(check.id): \(check.trial.commandLine(executable: product).dropFirst("swift run ".count)), "
                + "against the lab's server on 127.0.0.1, seed \(seed)")
            // A memory check compares with a clean run's peak: that run comes first, unshown.
            let cleanPeak = check.symptom?.measuresMemory == true
                ? try checks.run(lesson.checks[0].varied(by: seed), cleanPeak: nil, showing: false).memoryBaseline : nil
            let ran = try checks.run(check, cleanPeak: cleanPeak, drawing: true)
            let (status, passed, detail, seen) = ExerciseCheck.judge(ran.observation, by: check)
            let outcome = ExerciseCheck.Outcome(exercise: lesson.id.rawValue, check: check.id, status: status, detail: detail,
                                                command: checks.command(for: check), seconds: ran.seconds, symptomSeen: seen, passed: passed)
            picture = try? drawPicture(check, yours: ran, outcome: outcome, checks: checks)
            return outcome
        }
        Console.output("")
        show(outcome, nameWidth: check.id.count, withCommand: false, started: started)
        if let picture {
            Console.output("picture: \(picture.path)  (this run above the corrected variant's, on one time axis; open it in a browser)")
        }
        var counted = outcome
        counted.passed = started && outcome.passed
        return counted
    }

    /// `lab exercise see`'s picture: this run and the corrected variant's under the same check,
    /// one above the other, in `.build/lab-exercises/pictures/`. Nil when a run left no record.
    private func drawPicture(_ check: LabCatalogue.Check, yours: TrialRunner.Ran, outcome: ExerciseCheck.Outcome,
                             checks: ExerciseCheck) throws -> URL? {
        let lessonProgram = try ExerciseBuild.build(product: lesson.id.executable, in: workspace.root, ignoringLock: build.ignoringLock)
        let corrected = try checks.runCorrected(check, lesson: lessonProgram)
        guard let mine = yours.exchanges, let right = corrected.exchanges else { return nil }
        let who = variant.map { "the lesson's \($0.rawValue) variant" } ?? "your code"
        let (rightStatus, _, rightDetail, _) = ExerciseCheck.judge(corrected.observation, by: check)
        let svg = ExchangePicture.svg(
            caption: "\(lesson.id.number) \(check.id): \(check.trial.commandLine(executable: product).dropFirst("swift run ".count))",
            lanes: [("\(who): \(outcome.status.rawValue), \(outcome.detail)", mine, check.trial.size),
                    ("corrected: \(rightStatus.rawValue), \(rightDetail)", right, check.trial.size)],
            lesson: lesson.id)
        let folder = workspace.root.appendingPathComponent(".build/lab-exercises/pictures")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("\(lesson.id.number)-\(check.id).svg")
        try OutputFile.checkReplaceable(file)
        try Data(svg.utf8).write(to: file, options: .atomic)
        return file
    }

    /// Starts the lab server and a scratch folder for `body`'s checks, and removes both after.
    private func withChecks<T>(program: URL, showing: Bool, _ body: (ExerciseCheck) throws -> T) throws -> T {
        let server: LabServer
        do {
            server = try LabServer.start()
        } catch {
            throw ExerciseError.failure("cannot start the lab server: \(error)")
        }
        defer { server.stop() }
        let scratch: URL
        do {
            scratch = try LabFolders.forThisRun("lab-exercise")
        } catch {
            throw ExerciseError.failure("\(error)")
        }
        defer { try? FileManager.default.removeItem(at: scratch) }
        var runner = TrialRunner(server: server, program: program, extraArguments: variant.map { ["--variant", $0.rawValue] } ?? [],
                                 lesson: lesson.id, workFolder: scratch, timeout: timeout)
        runner.showing = showing
        return try body(ExerciseCheck(lesson: lesson, runner: runner, executable: product, variant: variant, seed: seed, only: only))
    }

    /// One check's lines for a person: ✔ and the verdict, or ✗ with what the run showed and the
    /// command that shows it. The check's diagnosis is left to the hints.
    private func show(_ outcome: ExerciseCheck.Outcome, nameWidth width: Int, withCommand: Bool = true, started: Bool = true) {
        let name = outcome.check.padding(toLength: width, withPad: " ", startingAt: 0)
        let indent = String(repeating: " ", count: width + 3)
        switch outcome.status {
        case .fixed, .verifies, .holds:
            if lesson.isBaseline(outcome.check) {
                return Console.output("· \(name) baseline: the starting code \(outcome.status == .verifies ? "verifies" : "holds") here too, so it counts for nothing")
            }
            Console.output(started ? "✔ \(name) \(outcome.status.rawValue)"
                : "· \(name) not started: the starting code \(outcome.status == .verifies ? "verifies" : "holds") here too")
        case .notRun, .notReached:
            Console.output("· \(name) \(outcome.detail)")
        default:
            let label = switch outcome.status {
            case .timedOut: "timed out"
            case .crashed: "crashed"
            case .stillThere: "still there"
            default: "fails"
            }
            Console.output("✗ \(name) \(label): \(outcome.detail)" + (withCommand ? "\n\(indent)see it: \(outcome.command)" : ""))
        }
    }

    /// What every JSON line of this check says of the code: whether it was attempted, its digest,
    /// and the hints shown so far.
    private func recordFacts(code: String) -> CodeFacts {
        CodeFacts(attempted: variant != nil || code != (try? workspace.startingCode(lesson)), baselines: lesson.checks.map(\.id).filter(lesson.isBaseline),
                          codeSHA256: ExerciseWorkspace.sha256(code),
                          hintsShown: workspace.progress().exercises[lesson.id.rawValue]?.hintsShown ?? [:])
    }

    /// One JSON line: the outcome, and what a teacher collecting them needs to know of it.
    private func emit(_ record: CheckRecord) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        Console.output(String(decoding: (try? encoder.encode(record)) ?? Data(), as: UTF8.self))
    }

    private func remember(_ failing: [String], code: String, compiles: Bool, total: Int = 0) {
        var progress = workspace.progress()
        let hints = progress.exercises[lesson.id.rawValue]?.hintsShown ?? [:]
        progress.exercises[lesson.id.rawValue] = .init(sourceSHA256: ExerciseWorkspace.sha256(code), failing: failing, total: total,
                                                  compiles: compiles, hintsShown: hints)
        // The build took its lock in the same folder, so a planted link was refused already; a
        // .build that cannot be written loses the progress, not the check.
        try? workspace.save(progress)
    }
}

/// What every JSON line of one `check` says of the code, the same for each of its checks.
struct CodeFacts {
    /// Whether the code differs from the starting code: an exercise not started is not failing.
    let attempted: Bool
    /// The checks the starting code passes too, which earn nothing.
    let baselines: [String]
    /// SHA-256 of the checked file's text.
    let codeSHA256: String
    /// How many hints of each check the student has asked for.
    let hintsShown: [String: Int]

    /// The record of one outcome: what `--json` prints and `--submit` sends. A check of code not
    /// yet changed passes nothing: what it holds, the starting code holds.
    func record(_ outcome: ExerciseCheck.Outcome) -> CheckRecord {
        var record = CheckRecord(exercise: outcome.exercise, check: outcome.check, status: outcome.status, passed: attempted && outcome.passed,
                                 baseline: baselines.contains(outcome.check),
                                 detail: outcome.detail, command: outcome.command, seconds: outcome.seconds, symptomSeen: outcome.symptomSeen,
                                 attempted: attempted, codeSHA256: codeSHA256, hintsShown: hintsShown[outcome.check] ?? 0,
                                 timestamp: ISO8601DateFormatter().string(from: Date()))
        // Where a started exercise is stuck, the run itself, for the teacher's page; without
        // the headers, which the picture does not draw.
        if attempted, !outcome.passed { record.exchanges = outcome.exchanges?.withoutHeaders }
        return record
    }
}
