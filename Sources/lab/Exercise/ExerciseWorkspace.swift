import ArgumentParser
import Crypto
import Foundation
import LabVocabulary
import LabCatalogue
import LabHarness
import LabKit

/// The package folder as `lab exercise` uses it: the students' files under Sources/Exercises,
/// the lessons they start from, and what the last checks found (kept under .build, never
/// committed).
struct ExerciseWorkspace {
    let root: URL

    /// The package folder: the current directory or the nearest folder above it that has
    /// Package.swift and Sources/Exercises.
    static func find() throws -> ExerciseWorkspace {
        var folder = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL
        while true {
            let manifest = folder.appendingPathComponent("Package.swift").path
            let exercises = folder.appendingPathComponent("Sources/Exercises").path
            if FileManager.default.fileExists(atPath: manifest), FileManager.default.fileExists(atPath: exercises) {
                return ExerciseWorkspace(root: folder)
            }
            let parent = folder.deletingLastPathComponent()
            guard parent.path != folder.path else {
                throw ValidationError("no Sources/Exercises here or above: run `swift run lab exercise` in the Download Lab folder")
            }
            folder = parent
        }
    }

    func exerciseFile(_ lesson: LessonDefects) -> URL { root.appendingPathComponent(ExerciseSource.path(for: lesson)) }
    func exerciseFolder(_ lesson: LessonDefects) -> URL { root.appendingPathComponent(ExerciseSource.folder(for: lesson)) }

    /// Every file of the exercise's starting code, made from the Swift files at the top of the
    /// lesson's folder.
    func startingFiles(_ lesson: LessonDefects) throws -> [ExerciseSource.File] {
        let folderName = ExerciseSource.lessonFolder(for: lesson)
        let folder = root.appendingPathComponent(folderName)
        var lessonFiles: [String: String] = [:]
        do {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
                let file = folder.appendingPathComponent(name)
                guard OutputFile.isRegularFile(file) else { continue }
                lessonFiles[name] = try String(contentsOf: file, encoding: .utf8)
            }
        } catch {
            throw ExerciseError.failure("cannot read \(folderName): \(error.localizedDescription)")
        }
        do {
            return try ExerciseSource.files(for: lesson, lessonFiles: lessonFiles)
        } catch {
            throw ExerciseError.failure("cannot make exercise \(lesson.id.number) from \(folderName): \(error)")
        }
    }

    /// The exercise's files besides Article.swift that are not what `reset` makes: changed,
    /// missing, or added. They are the lab's (the crowd and its watchdog, the wiring), so a check
    /// of changed ones would judge the lab's code, not the student's.
    func alteredSupportFiles(_ lesson: LessonDefects) throws -> [String] {
        let folder = exerciseFolder(lesson)
        let starting = try startingFiles(lesson).filter { $0.name != ExerciseSource.studentFile }
        var altered = starting.filter { file in
            (try? String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8)) != file.text
        }.map(\.name)
        let known = Set(starting.map(\.name) + [ExerciseSource.studentFile])
        let present = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        altered += present.filter { $0.hasSuffix(".swift") && !known.contains($0) }.sorted()
        return altered.map { "\(ExerciseSource.folder(for: lesson))/\($0)" }
    }

    /// One line for a student whose support files changed: which, and how to put them back.
    func alteredSupportProblem(_ lesson: LessonDefects) throws -> String? {
        let altered = try alteredSupportFiles(lesson)
        guard let first = altered.first else { return nil }
        let more = altered.count > 1 ? " (and \(altered.count - 1) more)" : ""
        return "\(first)\(more) is not what the exercise started with: only \(ExerciseSource.studentFile) is yours to change; "
            + "`swift run lab exercise reset \(lesson.id.number) --keep-article` puts the rest back"
    }

    /// The starting code of the student's file.
    func startingCode(_ lesson: LessonDefects) throws -> String {
        try startingFiles(lesson).first { $0.name == ExerciseSource.studentFile }!.text
    }

    /// The student's code, or nil when the file is missing or unreadable.
    func studentCode(_ lesson: LessonDefects) -> String? {
        try? String(contentsOf: exerciseFile(lesson), encoding: .utf8)
    }

    // MARK: Progress

    struct Progress: Codable {
        var exercises: [String: ExerciseProgress] = [:]
        /// The copy of the package that wrote it (`CopyIdentity`); nil in files from before it was kept.
        var copy: String?
    }

    struct ExerciseProgress: Codable {
        /// SHA-256 of the code that was checked: a result holds only for that code.
        var sourceSHA256: String
        var failing: [String]
        var total: Int
        var compiles: Bool
        /// How many hints of each check have been shown.
        var hintsShown: [String: Int] = [:]

        var isDone: Bool { compiles && failing.isEmpty }

        /// For hints asked for before any check: its digest matches no code, so it says nothing
        /// about the code, only which hints were shown.
        static let neverChecked = ExerciseProgress(sourceSHA256: "", failing: [], total: 0, compiles: false)
    }

    var progressFile: URL { root.appendingPathComponent(".build/lab-exercises/progress.json") }

    /// The progress file is anyone's to edit, so it is read as untrusted input: one that is not a
    /// regular file, larger than any the lab writes, or not of its shape counts as no progress,
    /// and counts out of range are clamped.
    func progress() -> Progress {
        guard let data = OutputFile.readBounded(progressFile, limit: Self.largestProgressFile),
              var progress = try? JSONDecoder().decode(Progress.self, from: data)
        else { return Progress() }
        // Another copy's progress (a folder copied with its .build) is not this student's.
        if let copy = progress.copy, copy != CopyIdentity.of(root) { return Progress() }
        for (lesson, exercise) in progress.exercises {
            progress.exercises[lesson]?.total = max(0, exercise.total)
            progress.exercises[lesson]?.hintsShown = exercise.hintsShown.mapValues { min(max($0, 0), Self.mostHints) }
        }
        return progress
    }

    private static let largestProgressFile = 1 << 20
    private static let mostHints = 100

    /// Progress is a convenience: a .build folder that cannot be written loses it, nothing more.
    /// A link planted as the lab's folder is refused with one line: nothing is written through it.
    func save(_ progress: Progress) throws {
        do {
            try OutputFile.makeOwnFolder(progressFile.deletingLastPathComponent())
        } catch let error as OutputFileError {
            throw ExerciseError.failure("cannot keep the exercises' progress: \(error)")
        }
        var mine = progress
        mine.copy = CopyIdentity.of(root)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try? encoder.encode(mine).write(to: progressFile, options: .atomic)
    }

    static func sha256(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

/// What `lab exercise` reports as its one line on stderr, with exit 1: code that does not
/// compile, a file that cannot be written. Bad input is a `ValidationError` (exit 64).
enum ExerciseError: Error, CustomStringConvertible {
    case failure(String)
    /// The student's code does not compile: the compiler's first error.
    case doesNotCompile(CompilerDiagnostic)

    var description: String {
        switch self {
        case .failure(let message): message
        case .doesNotCompile(let diagnostic): diagnostic.summary
        }
    }
}
