import ArgumentParser
import Dispatch
import Foundation
import LabCatalogue
import LabHarness
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
            throw ValidationError("no exercise \"\(name)\"; there are \(Catalogue.lessons.map(\.id.number).joined(separator: ", "))")
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

/// How long one run of a check may take, for `check` and `see`.
struct RunTimeLimit: ParsableArguments {
    @Option(help: "Stop a run that takes longer than this many seconds, and report it as timed out.")
    var timeout = Int(TrialRunner.defaultTimeout.seconds)

    func validate() throws {
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 600 seconds") }
    }

    var duration: Duration { .seconds(timeout) }
}

/// The seed a round of checks varies its trials by: printed by `check`, given back with `--seed`.
struct SeedOption: ParsableArguments {
    @Option(help: ArgumentHelp("Vary the checks' sizes, break points and error statuses by this seed, as an earlier round printed it, "
                               + "to see that round's runs again; 0 plays them as the catalogue declares them. Without it, a new seed each time.",
                               valueName: "N"))
    var seed: UInt32?

    /// Chosen once per command: every exercise of a `--all` round shares it.
    var chosen: CheckSeed { seed.map(CheckSeed.init) ?? CheckSeed.random() }
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
                lines.append("  \(lesson.id.number)  \(lesson.id.rawValue.dropFirst(3).padding(toLength: 24, withPad: " ", startingAt: 0)) \(state.shown)")
            }
            lines.insert("Exercises (Sources/Exercises/<lesson>/Article.swift):", at: 0)
            if let next {
                lines += ["", "Next: exercise \(next.id.number). Read Lessons/\(next.id.rawValue).md, edit \(ExerciseSource.path(for: next)), then:",
                          "  swift run lab exercise check \(next.id.number)"]
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
            case notStarted(checks: Int, baselines: Int)
            case editedNotChecked(checks: Int)

            var shown: String {
                switch self {
                case .missing(let number): "missing: `swift run lab exercise reset \(number)`"
                case .doesNotCompile: "does not compile"
                case .done: "done"
                case .failing(let count, let total): "failing \(count) of \(total) checks"
                case .notStarted(let checks, let baselines): "not started (\(checks) checks, \(baselines) of them baselines the starting code passes)"
                case .editedNotChecked(let checks): "edited, not checked yet (\(checks) checks)"
                }
            }
        }

        static func state(of lesson: LessonDefects, in workspace: ExerciseWorkspace,
                          progress: ExerciseWorkspace.Progress) throws -> State {
            let total = lesson.checks.count
            guard let code = workspace.studentCode(lesson) else { return .missing(number: lesson.id.number) }
            // The starting code is not started, whatever a check of it found.
            if code == (try workspace.startingCode(lesson)) { return .notStarted(checks: total, baselines: total - lesson.failingAtStart.count) }
            let checked = progress.exercises[lesson.id.rawValue].flatMap { $0.sourceSHA256 == ExerciseWorkspace.sha256(code) ? $0 : nil }
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

        @Option(help: ArgumentHelp("Run only this check, after the clean download (repeat for more); the exercise's state is left as it was.",
                                   valueName: "CHECK"))
        var only: [String] = []

        @OptionGroup var limit: RunTimeLimit

        @OptionGroup var seed: SeedOption

        @OptionGroup var build: ExerciseBuildOptions

        @OptionGroup var classSubmission: ClassSubmitOptions

        func validate() throws {
            if all == (exercise != nil) { throw ValidationError("name one exercise, or give --all") }
            if let exercise { _ = try Exercise.lesson(exercise) }
            if variant != nil && classSubmission.submit != nil {
                throw ValidationError("--submit sends your own code's results; it does not go with --variant")
            }
            if !only.isEmpty {
                guard let exercise, classSubmission.submit == nil else { throw ValidationError("--only runs checks of one exercise, and sends nothing") }
                for check in only { _ = try Exercise.check(check, of: try Exercise.lesson(exercise)) }
            }
        }

        func run() throws {
            let lessons = try exercise.map { [try Exercise.lesson($0)] } ?? Catalogue.lessons
            let workspace = try ExerciseWorkspace.find()
            var records: [CheckRecord] = []
            let seed = seed.chosen
            for lesson in lessons {
                records += try ExerciseRun(lesson: lesson, workspace: workspace, variant: variant, json: json,
                                           build: build, seed: seed, timeout: limit.duration, only: only.isEmpty ? nil : Set(only))
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
                var checked = progress.exercises[lesson.id.rawValue]
                if checked?.sourceSHA256 != ExerciseWorkspace.sha256(code) {
                    Console.output("Checking exercise \(lesson.id.number) first:")
                    _ = try ExerciseRun(lesson: lesson, workspace: workspace, variant: nil, json: false, build: build, seed: .random()).check()
                    progress = workspace.progress()
                    checked = progress.exercises[lesson.id.rawValue]
                }
                guard let checked, checked.compiles else {
                    return Console.output("Fix the compiler error first: it names the file and the line.")
                }
                guard let failing = checked.failing.first.flatMap(lesson.check(named:)) else {
                    return Console.output("Every check of exercise \(lesson.id.number) holds: no hint needed.")
                }
                target = failing
            }
            let shown = progress.exercises[lesson.id.rawValue]?.hintsShown[target.id] ?? 0
            let index = min(shown, target.hints.count - 1)
            var lines = ["\(target.id), hint \(index + 1) of \(target.hints.count): \(target.hints[index])"]
            // The diagnosis comes with the last hint, not before.
            if index + 1 == target.hints.count {
                lines.append("(\(target.summary)" + (target.source.map { "; from \($0.cited)" } ?? "") + ")")
            } else {
                lines.append("(run it again for the next hint)")
            }
            Console.output(lines.joined(separator: "\n"))
            progress.exercises[lesson.id.rawValue, default: .neverChecked]
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
        @OptionGroup var limit: RunTimeLimit
        @OptionGroup var seed: SeedOption
        @OptionGroup var build: ExerciseBuildOptions

        func validate() throws { _ = try Exercise.check(check, of: try exercise.lesson()) }

        func run() throws {
            let lesson = try exercise.lesson()
            let check = try Exercise.check(self.check, of: lesson)
            let workspace = try ExerciseWorkspace.find()
            let run = ExerciseRun(lesson: lesson, workspace: workspace, variant: variant, json: false, build: build,
                                  seed: seed.chosen, timeout: limit.duration)
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
                        _ = try ExerciseRun(lesson: lesson, workspace: workspace, variant: nil, json: false, build: build, seed: .random()).check()
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

        @Flag(help: "Put back every file of the exercise but Article.swift, which stays as it is.")
        var keepArticle = false

        func run() throws {
            let lesson = try exercise.lesson()
            let workspace = try ExerciseWorkspace.find()
            if keepArticle { return try putBackSupport(lesson, workspace) }
            let files = try workspace.startingFiles(lesson)
            let starting = files.first { $0.name == ExerciseSource.studentFile }!.text
            var kept = ""
            if let current = workspace.studentCode(lesson), current != starting {
                let backup = workspace.root.appendingPathComponent(
                    ".build/lab-exercises/\(lesson.id.rawValue)-\(Int(Date().timeIntervalSince1970)).swift")
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

        /// Writes the exercise's files but Article.swift as `reset` makes them, and removes Swift
        /// files `reset` does not make: they are the lab's, not the student's.
        private func putBackSupport(_ lesson: LessonDefects, _ workspace: ExerciseWorkspace) throws {
            let folder = workspace.exerciseFolder(lesson)
            let altered = try workspace.alteredSupportFiles(lesson)
            let files = try workspace.startingFiles(lesson).filter { $0.name != ExerciseSource.studentFile }
            do {
                for file in files {
                    try file.text.write(to: folder.appendingPathComponent(file.name), atomically: true, encoding: .utf8)
                }
                let made = Set(files.map { "\(ExerciseSource.folder(for: lesson))/\($0.name)" })
                for path in altered where !made.contains(path) {
                    let added = workspace.root.appendingPathComponent(path)
                    // Named by its path in the folder, so two added files of one name keep apart.
                    let inFolder = path.dropFirst(ExerciseSource.folder(for: lesson).count + 1).replacingOccurrences(of: "/", with: "-")
                    let backup = workspace.root.appendingPathComponent(".build/lab-exercises/\(lesson.id.rawValue)-\(inFolder)")
                    try OutputFile.makeOwnFolder(backup.deletingLastPathComponent())
                    try? FileManager.default.removeItem(at: backup)
                    try FileManager.default.moveItem(at: added, to: backup)
                }
            } catch {
                throw ExerciseError.failure("cannot put back the files of \(ExerciseSource.folder(for: lesson)): \(error.localizedDescription)")
            }
            Console.output(altered.isEmpty ? "\(ExerciseSource.folder(for: lesson)): every file but \(ExerciseSource.studentFile) was already as it started"
                : "put back \(altered.joined(separator: ", ")); \(ExerciseSource.path(for: lesson)) is as you left it")
        }
    }
}
