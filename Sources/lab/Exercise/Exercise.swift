import ArgumentParser
import Dispatch
import Foundation
import LabCatalogue
import LabKit
import LabPlatform
import LabServer
import LabVocabulary

/// `lab exercise`: the article's code of each lesson, for a student to fix, checked against the
/// lab server under the faults that expose each of its defects.
struct Exercise: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fix the article's code yourself; the lab server checks each defect.",
        discussion: """
            Each lesson has an exercise: the article's code, defects included, in
            Sources/Exercises/<lesson>/Article.swift, built as its own executable. Edit it, then check it:
            `lab exercise check 02` builds it and runs it against the lab server once per defect, under the
            fault that exposes it, and verifies the bytes from outside.
            """,
        subcommands: [List.self, Check.self, Hint.self, See.self, Watch.self, Reset.self],
        defaultSubcommand: List.self
    )

    static func lesson(_ name: String) throws -> LessonDefects {
        guard let lesson = Catalogue.lesson(named: name) else {
            throw ValidationError("no exercise \"\(name)\"; there are \(Catalogue.lessons.map(\.number).joined(separator: ", "))")
        }
        return lesson
    }

    /// A check of `lesson` by name; bad input (exit 64) when there is none.
    static func check(_ name: String, of lesson: LessonDefects) throws -> LabCatalogue.Check {
        do {
            return try lesson.check(mustBeNamed: name)
        } catch {
            throw ValidationError(error.description)
        }
    }
}

/// The exercise a subcommand works on, by number or name.
struct ExerciseName: ParsableArguments {
    @Argument(help: "The exercise: 02, 02-filehandle, … (`lab exercise` lists them).")
    var name: String

    func validate() throws { _ = try lesson() }
    func lesson() throws -> LessonDefects { try Exercise.lesson(name) }
}

/// How `check`, `hint` and `watch` build the student's code.
struct ExerciseBuildOptions: ParsableArguments {
    @Flag(name: .customLong("ignore-lock"),
          help: "Build with SwiftPM's --ignore-lock: for a check started by a running `swift test`, which holds the package's lock until its tests end.")
    var ignoringLock = false
}

extension Exercise {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Every exercise, its state, and which one to do next.")

        func run() throws {
            let workspace = try ExerciseWorkspace.find()
            let progress = workspace.progress()
            var next: LessonDefects?
            var lines: [String] = []
            for lesson in Catalogue.lessons {
                let state = try Self.state(of: lesson, in: workspace, progress: progress)
                if next == nil, state != .done { next = lesson }
                lines.append("  \(lesson.number)  \(lesson.lesson.dropFirst(3).padding(toLength: 24, withPad: " ", startingAt: 0)) \(state.shown)")
            }
            lines.insert("Exercises (Sources/Exercises/<lesson>/Article.swift):", at: 0)
            if let next {
                lines += ["", "Next: exercise \(next.number). Read Lessons/\(next.lesson).md, edit \(ExerciseSource.path(for: next)), then:",
                          "  swift run lab exercise check \(next.number)"]
            } else {
                lines += ["", "Every exercise is done."]
            }
            Console.output(lines.joined(separator: "\n"))
        }

        /// "not started", "failing 3 of 8 checks", "done", "edited, not checked yet", …
        /// Where a student is with one exercise, as the last check of this very code found it.
        enum State: Equatable {
            case missing(number: String)
            case doesNotCompile
            case done
            case failing(count: Int, of: Int)
            case notStarted(checks: Int)
            case editedNotChecked(checks: Int)

            var shown: String {
                switch self {
                case .missing(let number): "missing: `swift run lab exercise reset \(number)`"
                case .doesNotCompile: "does not compile"
                case .done: "done"
                case .failing(let count, let total): "failing \(count) of \(total) checks"
                case .notStarted(let checks): "not started (\(checks) checks)"
                case .editedNotChecked(let checks): "edited, not checked yet (\(checks) checks)"
                }
            }
        }

        static func state(of lesson: LessonDefects, in workspace: ExerciseWorkspace,
                          progress: ExerciseWorkspace.Progress) throws -> State {
            let total = lesson.checks.count
            guard let code = workspace.studentCode(lesson) else { return .missing(number: lesson.number) }
            // The starting code is not started, whatever a check of it found.
            if code == (try workspace.startingCode(lesson)) { return .notStarted(checks: total) }
            let checked = progress.exercises[lesson.lesson].flatMap { $0.sourceSHA256 == ExerciseWorkspace.sha256(code) ? $0 : nil }
            if let checked {
                if !checked.compiles { return .doesNotCompile }
                return checked.isDone ? .done : .failing(count: checked.failing.count, of: checked.total)
            }
            return .editedNotChecked(checks: total)
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build an exercise and run every check against the lab server.",
            discussion: "Exit status: 0 when every check holds, 1 when one does not (or the code does not compile), 64 for bad input.")

        @Argument(help: "The exercise: 02, 02-filehandle, … (`lab exercise` lists them).")
        var exercise: String?

        @Flag(help: "Check every exercise.")
        var all = false

        @Flag(help: "Print one JSON object per exercise and check (JSON Lines) instead of the lines for people.")
        var json = false

        @Option(help: "Check the lesson's own variant (article or corrected) instead of the exercise.")
        var variant: Variant?

        @Option(help: "Stop a run that takes longer than this many seconds, and report it as timed out.")
        var timeout = Int(TrialRunner.defaultTimeout.seconds)

        @OptionGroup var build: ExerciseBuildOptions

        @OptionGroup var classSubmission: ClassSubmitOptions

        func validate() throws {
            guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 600 seconds") }
            if all == (exercise != nil) { throw ValidationError("name one exercise, or give --all") }
            if let exercise { _ = try Exercise.lesson(exercise) }
            if variant != nil && classSubmission.submit != nil {
                throw ValidationError("--submit sends your own code's results; it does not go with --variant")
            }
        }

        func run() throws {
            let lessons = try exercise.map { [try Exercise.lesson($0)] } ?? Catalogue.lessons
            let workspace = try ExerciseWorkspace.find()
            var records: [CheckRecord] = []
            for lesson in lessons {
                records += try ExerciseRun(lesson: lesson, workspace: workspace, variant: variant, json: json,
                                           build: build, timeout: .seconds(timeout))
                    .check(continuing: all || classSubmission.submit != nil)
            }
            classSubmission.send(checks: records)
            if !records.allSatisfy(\.passed) { throw ExitCode.failure }
        }
    }

    struct Hint: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The next hint for a check: the first that fails, or the one named.",
            discussion: "Each run shows the next hint of that check: from what the run shows, to its cause, to the fix.")

        @OptionGroup var exercise: ExerciseName
        @Argument(help: "The check, as `lab exercise check` names it (e.g. resumes-after-kill). Without it, the first check that fails.")
        var check: String?
        @OptionGroup var build: ExerciseBuildOptions

        func validate() throws {
            if let check { _ = try Exercise.check(check, of: try exercise.lesson()) }
        }

        func run() throws {
            let lesson = try exercise.lesson()
            let workspace = try ExerciseWorkspace.find()
            var progress = workspace.progress()
            let target: LabCatalogue.Check
            if let check {
                target = try Exercise.check(check, of: lesson)
            } else {
                let code = workspace.studentCode(lesson) ?? ""
                var checked = progress.exercises[lesson.lesson]
                if checked?.sourceSHA256 != ExerciseWorkspace.sha256(code) {
                    Console.output("Checking exercise \(lesson.number) first:")
                    _ = try ExerciseRun(lesson: lesson, workspace: workspace, variant: nil, json: false, build: build).check()
                    progress = workspace.progress()
                    checked = progress.exercises[lesson.lesson]
                }
                guard let checked, checked.compiles else {
                    return Console.output("Fix the compiler error first: it names the file and the line.")
                }
                guard let failing = checked.failing.first.flatMap(lesson.check(named:)) else {
                    return Console.output("Every check of exercise \(lesson.number) holds: no hint needed.")
                }
                target = failing
            }
            let shown = progress.exercises[lesson.lesson]?.hintsShown[target.id] ?? 0
            let index = min(shown, target.hints.count - 1)
            var lines = ["\(target.id), hint \(index + 1) of \(target.hints.count): \(target.hints[index])"]
            // The diagnosis comes with the last hint, not before.
            if index + 1 == target.hints.count {
                lines.append("(\(target.summary)" + (target.source.map { "; from \($0.cited)" } ?? "") + ")")
            } else {
                lines.append("(run it again for the next hint)")
            }
            Console.output(lines.joined(separator: "\n"))
            progress.exercises[lesson.lesson, default: .neverChecked]
                .hintsShown[target.id] = index + 1
            try workspace.save(progress)
        }
    }

    struct See: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run one check where you can watch it: each command, the program's story, the verdict.",
            discussion: """
                For checks that run the program twice (killed with SIGKILL at the stall, then run again) the
                two runs need one server that keeps its address, which the lab's server here does. Exit status:
                0 when the check holds, 1 when it does not.
                """)

        @OptionGroup var exercise: ExerciseName
        @Argument(help: "The check, as `lab exercise check` names it.")
        var check: String
        @Option(help: "Run the lesson's own variant (article or corrected) instead of the exercise.")
        var variant: Variant?
        @OptionGroup var build: ExerciseBuildOptions

        func validate() throws { _ = try Exercise.check(check, of: try exercise.lesson()) }

        func run() throws {
            let lesson = try exercise.lesson()
            let check = try Exercise.check(self.check, of: lesson)
            let workspace = try ExerciseWorkspace.find()
            let run = ExerciseRun(lesson: lesson, workspace: workspace, variant: variant, json: false, build: build)
            let outcome = try run.see(check)
            if !outcome.passed { throw ExitCode.failure }
        }
    }

    struct Watch: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check an exercise again every time its file is saved. Ctrl-C stops.")

        @OptionGroup var exercise: ExerciseName
        @OptionGroup var build: ExerciseBuildOptions

        func run() throws {
            let lesson = try exercise.lesson()
            let workspace = try ExerciseWorkspace.find()
            let file = workspace.exerciseFile(lesson)
            var checked: String?
            while true {
                let code = workspace.studentCode(lesson)
                if let code, code != checked {
                    checked = code
                    Console.output("── \(Self.clock()) checking \(ExerciseSource.path(for: lesson))")
                    do {
                        _ = try ExerciseRun(lesson: lesson, workspace: workspace, variant: nil, json: false, build: build).check()
                    } catch {
                        Console.error("lab exercise watch: \(error)")
                    }
                    Console.output("── watching \(file.lastPathComponent) for changes (Ctrl-C stops)")
                }
                Thread.sleep(forTimeInterval: 0.5)
            }
        }

        static func clock() -> String {
            let formatter = DateFormatter()
            formatter.dateFormat = "HH:mm:ss"
            return formatter.string(from: Date())
        }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put an exercise back to its starting code, made from the lesson's article variant.",
            discussion: "The code it replaces is kept in .build/lab-exercises/.")

        @OptionGroup var exercise: ExerciseName

        func run() throws {
            let lesson = try exercise.lesson()
            let workspace = try ExerciseWorkspace.find()
            let files = try workspace.startingFiles(lesson)
            let starting = files.first { $0.name == ExerciseSource.studentFile }!.text
            var kept = ""
            if let current = workspace.studentCode(lesson), current != starting {
                let backup = workspace.root.appendingPathComponent(
                    ".build/lab-exercises/\(lesson.lesson)-\(Int(Date().timeIntervalSince1970)).swift")
                do {
                    try OutputFile.makeOwnFolder(backup.deletingLastPathComponent())
                    try current.write(to: backup, atomically: true, encoding: .utf8)
                } catch {
                    throw ExerciseError.failure("cannot keep your version at \(backup.path), so nothing was reset: \(error.localizedDescription)")
                }
                kept = " (your version is kept at \(backup.path.dropFirst(workspace.root.path.count + 1)))"
            }
            do {
                let folder = workspace.exerciseFolder(lesson)
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                for file in files {
                    try file.text.write(to: folder.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
                }
            } catch {
                throw ExerciseError.failure("cannot write \(ExerciseSource.path(for: lesson)): \(error.localizedDescription)")
            }
            Console.output("\(ExerciseSource.path(for: lesson)) is back to its starting code\(kept).")
        }
    }
}

/// One `check` of one exercise: build, run the checks, print, remember.
struct ExerciseRun {
    let lesson: LessonDefects
    let workspace: ExerciseWorkspace
    /// Set to check the lesson's own variant instead of the student's code.
    let variant: Variant?
    let json: Bool
    let build: ExerciseBuildOptions
    var timeout = TrialRunner.defaultTimeout

    private var product: String { variant == nil ? lesson.exerciseExecutable : lesson.lessonExecutable }

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
            program = try ExerciseBuild.build(product: product, in: workspace.root, ignoringLock: build.ignoringLock)
        } catch let error as ExerciseError {
            let message = error.description
            // For people, the compiler's whole first error: its code excerpt and its notes.
            if !json, case .doesNotCompile(let diagnostic) = error { Console.output(diagnostic.text) }
            if variant == nil { remember([], code: code, compiles: false) }
            let outcome = ExerciseCheck.Outcome(exercise: lesson.lesson, check: CheckRecord.buildCheck, status: .doesNotCompile,
                                                detail: message, command: "swift build --product \(product)", seconds: 0, passed: false)
            if json {
                emit(facts.record(outcome))
            } else if continuing {
                Console.error("exercise \(lesson.number): \(message)")
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
                Console.output("Exercise \(lesson.number), \(what): \(lesson.checks.count) checks")
            }
            let width = lesson.checks.map(\.id.count).max()!
            return checks.run { outcome in
                let record = facts.record(outcome)
                records.append(record)
                if json { emit(record) } else { show(outcome, nameWidth: width, started: facts.attempted) }
            }
        }
        if variant == nil { remember(outcomes.filter { !$0.passed }.map(\.check), code: code, compiles: true, total: outcomes.count) }
        if !json, !facts.attempted {
            Console.output("not started: \(ExerciseSource.path(for: lesson)) is still the starting code, so no check counts yet; "
                           + "the ✗ lines are where to begin.")
        } else if !json {
            let failing = outcomes.filter { !$0.passed }.count
            Console.output(failing == 0
                ? "done: every check holds." + (variant == nil ? " `swift run lab exercise` shows the next one." : "")
                : "\(failing) of \(outcomes.count) checks fail." + (variant == nil ? " A hint: swift run lab exercise hint \(lesson.number)" : ""))
        }
        return records
    }

    /// `lab exercise see`: one check, with each command and the program's story shown as it runs.
    /// On the starting code it holds nothing, as in `check`.
    func see(_ check: LabCatalogue.Check) throws -> ExerciseCheck.Outcome {
        let started = recordFacts(code: code).attempted
        let program = try ExerciseBuild.build(product: product, in: workspace.root, ignoringLock: build.ignoringLock)
        let outcome = try withChecks(program: program, showing: true) { checks in
            Console.output("\(check.id): \(check.trial.commandLine(executable: product).dropFirst("swift run ".count)), "
                + "against the lab's server on 127.0.0.1")
            // A memory check compares with a clean run's peak: that run comes first, unshown.
            let cleanPeak = check.symptom?.measuresMemory == true
                ? try checks.run(lesson.checks[0], cleanPeak: nil, showing: false).peakRSSBytes : nil
            let ran = try checks.run(check, cleanPeak: cleanPeak)
            let (status, passed, detail, seen) = ExerciseCheck.judge(ran.observation, by: check)
            return ExerciseCheck.Outcome(exercise: lesson.lesson, check: check.id, status: status, detail: detail,
                                         command: checks.command(for: check), seconds: ran.seconds, symptomSeen: seen, passed: passed)
        }
        Console.output("")
        show(outcome, nameWidth: check.id.count, withCommand: false, started: started)
        var counted = outcome
        counted.passed = started && outcome.passed
        return counted
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
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("lab-exercise-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var runner = TrialRunner(server: server, program: program, extraArguments: variant.map { ["--variant", $0.rawValue] } ?? [],
                                 lesson: lesson.id, workFolder: scratch, timeout: timeout)
        runner.showing = showing
        return try body(ExerciseCheck(lesson: lesson, runner: runner, executable: product, variant: variant))
    }

    /// One check's lines for a person: ✔ and the verdict, or ✗ with what the run showed and the
    /// command that shows it. The check's diagnosis is left to the hints.
    private func show(_ outcome: ExerciseCheck.Outcome, nameWidth width: Int, withCommand: Bool = true, started: Bool = true) {
        let name = outcome.check.padding(toLength: width, withPad: " ", startingAt: 0)
        let indent = String(repeating: " ", count: width + 3)
        switch outcome.status {
        case .fixed, .verifies, .holds:
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
        CodeFacts(attempted: variant != nil || code != (try? workspace.startingCode(lesson)),
                          codeSHA256: ExerciseWorkspace.sha256(code),
                          hintsShown: workspace.progress().exercises[lesson.lesson]?.hintsShown ?? [:])
    }

    /// One JSON line: the outcome, and what a teacher collecting them needs to know of it.
    private func emit(_ record: CheckRecord) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        Console.output(String(decoding: (try? encoder.encode(record)) ?? Data(), as: UTF8.self))
    }

    private func remember(_ failing: [String], code: String, compiles: Bool, total: Int = 0) {
        var progress = workspace.progress()
        let hints = progress.exercises[lesson.lesson]?.hintsShown ?? [:]
        progress.exercises[lesson.lesson] = .init(sourceSHA256: ExerciseWorkspace.sha256(code), failing: failing, total: total,
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
    /// SHA-256 of the checked file's text.
    let codeSHA256: String
    /// How many hints of each check the student has asked for.
    let hintsShown: [String: Int]

    /// The record of one outcome: what `--json` prints and `--submit` sends. A check of code not
    /// yet changed passes nothing: what it holds, the starting code holds.
    func record(_ outcome: ExerciseCheck.Outcome) -> CheckRecord {
        CheckRecord(exercise: outcome.exercise, check: outcome.check, status: outcome.status, passed: attempted && outcome.passed,
                    detail: outcome.detail, command: outcome.command, seconds: outcome.seconds, symptomSeen: outcome.symptomSeen,
                    attempted: attempted, codeSHA256: codeSHA256, hintsShown: hintsShown[outcome.check] ?? 0,
                    timestamp: ISO8601DateFormatter().string(from: Date()))
    }
}
