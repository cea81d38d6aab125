import ArgumentParser
import Dispatch
import Foundation
import LabCatalogue
import LabKit
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
        subcommands: [List.self, Check.self, Hint.self, Watch.self, Reset.self],
        defaultSubcommand: List.self
    )

    static func lesson(_ name: String) throws -> LessonDefects {
        guard let lesson = Catalogue.lesson(named: name) else {
            throw ValidationError("no exercise \"\(name)\"; there are \(Catalogue.lessons.map(\.number).joined(separator: ", "))")
        }
        return lesson
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
            let total = lesson.defects.count + 1
            guard let code = workspace.studentCode(lesson) else { return .missing(number: lesson.number) }
            let checked = progress.exercises[lesson.lesson].flatMap { $0.sourceSHA256 == ExerciseWorkspace.sha256(code) ? $0 : nil }
            if let checked {
                if !checked.compiles { return .doesNotCompile }
                return checked.isDone ? .done : .failing(count: checked.failing.count, of: checked.total)
            }
            if code == (try workspace.startingCode(lesson)) { return .notStarted(checks: total) }
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

        func validate() throws {
            guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 600 seconds") }
            if all == (exercise != nil) { throw ValidationError("name one exercise, or give --all") }
            if let exercise { _ = try Exercise.lesson(exercise) }
        }

        func run() throws {
            let lessons = try exercise.map { [try Exercise.lesson($0)] } ?? Catalogue.lessons
            let workspace = try ExerciseWorkspace.find()
            var allHold = true
            for lesson in lessons {
                let outcomes = try ExerciseRun(lesson: lesson, workspace: workspace, variant: variant, json: json,
                                            build: build, timeout: .seconds(timeout)).check()
                allHold = allHold && outcomes.allSatisfy(\.passed)
            }
            if !allHold { throw ExitCode.failure }
        }
    }

    struct Hint: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "The next hint for the first check that fails.")

        @OptionGroup var exercise: ExerciseName
        @OptionGroup var build: ExerciseBuildOptions

        func run() throws {
            let lesson = try exercise.lesson()
            let workspace = try ExerciseWorkspace.find()
            var progress = workspace.progress()
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
            guard let failing = checked.failing.first else {
                return Console.output("Every check of exercise \(lesson.number) holds: no hint needed.")
            }
            guard let defect = lesson.defects.first(where: { $0.id == failing }) else {
                return Console.output("""
                    The clean download does not verify. Run it and read what it says:
                      swift run \(lesson.exerciseExecutable) --size 1MiB --faults ""
                    """)
            }
            let shown = checked.hintsShown[defect.id] ?? 0
            let index = min(shown, defect.hints.count - 1)
            Console.output("""
                \(defect.id): \(defect.summary)
                from \(defect.source.cited)
                hint \(index + 1) of \(defect.hints.count): \(defect.hints[index])
                """ + (index + 1 < defect.hints.count ? "\n(run it again for the next hint)" : ""))
            progress.exercises[lesson.lesson]?.hintsShown[defect.id] = index + 1
            workspace.save(progress)
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
                    try FileManager.default.createDirectory(at: backup.deletingLastPathComponent(), withIntermediateDirectories: true)
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

    func check() throws -> [ExerciseCheck.Outcome] {
        let product = variant == nil ? lesson.exerciseExecutable : lesson.lessonExecutable
        let code = workspace.studentCode(lesson) ?? ""
        let program: URL
        do {
            program = try ExerciseBuild.build(product: product, in: workspace.root, ignoringLock: build.ignoringLock)
        } catch ExerciseError.failure(let message) {
            if variant == nil { remember([], code: code, compiles: false) }
            if json {
                let outcome = ExerciseCheck.Outcome(exercise: lesson.lesson, check: "build", summary: "the code compiles",
                                                    status: .doesNotCompile, detail: message,
                                                    command: "swift build --product \(product)", seconds: 0, passed: false)
                emit(outcome)
                return [outcome]
            }
            throw ExerciseError.failure(message)
        }

        let server: LabServer
        do {
            server = try LabServer.start()
        } catch {
            throw ExerciseError.failure("cannot start the lab server: \(error)")
        }
        defer { server.stop() }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("lab-exercise-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let runner = TrialRunner(server: server, program: program, extraArguments: variant.map { ["--variant", $0.rawValue] } ?? [],
                                 lesson: lesson.id, workFolder: scratch, timeout: timeout)
        let checks = ExerciseCheck(lesson: lesson, runner: runner, executable: product)

        if !json {
            let what = variant.map { "the lesson's \($0.rawValue) variant (\(product))" } ?? ExerciseSource.path(for: lesson)
            Console.output("Exercise \(lesson.number), \(what): \(lesson.defects.count + 1) checks")
        }
        let width = ([ExerciseCheck.cleanCheck] + lesson.defects.map(\.id)).map(\.count).max()!
        let outcomes = checks.run { outcome in json ? emit(outcome) : show(outcome, nameWidth: width) }
        if variant == nil { remember(outcomes.filter { !$0.passed }.map(\.check), code: code, compiles: true, total: outcomes.count) }
        if !json {
            let failing = outcomes.filter { !$0.passed }.count
            Console.output(failing == 0
                ? "done: every check holds." + (variant == nil ? " `swift run lab exercise` shows the next one." : "")
                : "\(failing) of \(outcomes.count) checks fail." + (variant == nil ? " A hint: swift run lab exercise hint \(lesson.number)" : ""))
        }
        return outcomes
    }

    /// One check's lines for a person: ✔ and the verdict, or ✗ with what went wrong and the
    /// command that shows it.
    private func show(_ outcome: ExerciseCheck.Outcome, nameWidth width: Int) {
        let name = outcome.check.padding(toLength: width, withPad: " ", startingAt: 0)
        let indent = String(repeating: " ", count: width + 3)
        switch outcome.status {
        case .fixed, .verifies:
            Console.output("✔ \(name) \(outcome.status.rawValue)")
        case .notRun:
            Console.output("· \(name) \(outcome.detail)")
        default:
            let label = switch outcome.status {
            case .timedOut: "timed out"
            case .crashed: "crashed"
            default: outcome.status == .fails ? "fails" : "still there"
            }
            Console.output("✗ \(name) \(label): \(outcome.summary)\n\(indent)\(outcome.detail)\n\(indent)see it: \(outcome.command)")
        }
    }

    private func emit(_ outcome: ExerciseCheck.Outcome) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        Console.output(String(decoding: (try? encoder.encode(outcome)) ?? Data(), as: UTF8.self))
    }

    private func remember(_ failing: [String], code: String, compiles: Bool, total: Int = 0) {
        var progress = workspace.progress()
        let hints = progress.exercises[lesson.lesson]?.hintsShown ?? [:]
        progress.exercises[lesson.lesson] = .init(sourceSHA256: ExerciseWorkspace.sha256(code), failing: failing, total: total,
                                                  compiles: compiles, hintsShown: hints)
        workspace.save(progress)
    }
}
