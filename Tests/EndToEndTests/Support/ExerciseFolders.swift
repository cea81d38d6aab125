import Foundation
import LabCatalogue
import LabKit
import LabVocabulary
import Synchronization
import TestThreads
import Testing

/// How the tests use the exercises: `lab` run in the package folder, the exercise folders taken
/// one test at a time, code swapped in and put back, the records read, the commands pasted.
extension ExerciseTests {
    /// `lab` with `arguments`, run in the package folder. The commands that build get
    /// `--ignore-lock`: the `swift test` running this suite holds the package's lock.
    /// Once one run has hung, the others are not started: each would hang as long, and a stuck
    /// build would hold the whole suite for hours.
    static func lab(_ arguments: [String], timeout: TimeInterval = 600) throws -> ChildProcess.Finished {
        try exclusively { try runLab(arguments, timeout: timeout) }
    }

    /// A test that writes code into the exercise folders, builds it or runs what was built: on a
    /// thread of its own, waiting its turn without holding one of Swift Testing's, then alone
    /// with the folders and their builds from its first step to its last. The progress file its
    /// `lab exercise` runs write is put back as it was before the turn ends: restored outside the
    /// turn, it would be written while another test has the folder (one that plants a link there).
    static func takingTurns<T>(_ body: () throws -> T) async throws -> T {
        try await OffThePool.runWaitingForALock {
            try exclusively {
                let before = try? Data(contentsOf: progressFile)
                defer {
                    if let before { try? before.write(to: progressFile) } else { try? FileManager.default.removeItem(at: progressFile) }
                }
                return try body()
            }
        }
    }

    /// The exercise folders are the package's own, shared by every suite that writes code into
    /// them (this one, the catalogue's, lesson 09's, the class's): one test at a time uses them,
    /// whatever its suite. Recursive, as `withExerciseFiles` runs `lab` inside.
    static func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        exerciseFolders.lock()
        defer { exerciseFolders.unlock() }
        return try body()
    }
    private static let exerciseFolders = NSRecursiveLock()

    private static func runLab(_ arguments: [String], timeout: TimeInterval) throws -> ChildProcess.Finished {
        if aRunHung.withLock({ $0 }) {
            throw LabHung(description: "not run: an earlier `lab exercise` outlived its time limit")
        }
        let child = try ChildProcess("lab", buildingWithoutTheLock(arguments))
        child.process.currentDirectoryURL = packageRoot
        try child.start()
        let finished = child.wait(timeout: timeout)
        if finished.timedOut {
            aRunHung.withLock { $0 = true }
            throw LabHung(description: "`lab \(arguments.joined(separator: " "))` was still running after \(Int(timeout)) s; "
                          + "stdout ended: \(finished.stdout.suffix(300)); stderr ended: \(finished.stderr.suffix(300))")
        }
        return finished
    }

    private static let aRunHung = Mutex(false)

    struct LabHung: Error, CustomStringConvertible {
        let description: String
    }

    /// Builds the exercise's executable from its files as they are, without checking it.
    static func build(_ lesson: LessonDefects) throws {
        let finished = try exclusively {
            let child = try ChildProcess(program: URL(fileURLWithPath: "/usr/bin/env"),
                                         ["swift", "build", "--product", lesson.id.exerciseExecutable, "--ignore-lock"])
            child.process.currentDirectoryURL = packageRoot
            try child.start()
            return child.wait(timeout: 600)
        }
        try #require(finished.status == 0, "\(finished.stdout.suffix(2000))")
    }

    /// A check or see in a test plays the catalogue's trials as declared (`--seed 0`), whose
    /// figures the tests quote, unless the test gives a seed of its own: what a seed varies is
    /// SeedTests' and `.ci/verdicts`'.
    static func buildingWithoutTheLock(_ arguments: [String]) -> [String] {
        guard arguments.count > 1, ["check", "hint", "see", "watch"].contains(arguments[1]) else { return arguments }
        let declared = ["check", "see"].contains(arguments[1]) && !arguments.contains("--seed") ? ["--seed", "0"] : []
        return arguments + declared + ["--ignore-lock"]
    }

    static func records(_ output: String) throws -> [CheckRecord] {
        try output.split(separator: "\n").map { try JSONDecoder().decode(CheckRecord.self, from: Data($0.utf8)) }
    }


    /// Runs `body` with the exercise's file holding `code`, then puts the file back as it was.
    static func withExercise<T>(_ lesson: LessonDefects, holding code: String, _ body: () throws -> T) throws -> T {
        try withExerciseFiles(lesson, holding: [ExerciseSource.studentFile: code], body)
    }

    /// Runs `body` with the exercise's files named in `files` replaced, and puts them back.
    static func withExerciseFiles<T>(_ lesson: LessonDefects, holding files: [String: String], _ body: () throws -> T) throws -> T {
        try exclusively { try withFilesReplaced(lesson, holding: files, body) }
    }

    private static func withFilesReplaced<T>(_ lesson: LessonDefects, holding files: [String: String], _ body: () throws -> T) throws -> T {
        let folder = packageRoot.appendingPathComponent(ExerciseSource.folder(for: lesson))
        var originals: [URL: Data] = [:]
        defer { for (file, data) in originals { try? data.write(to: file) } }
        for (name, code) in files {
            let file = folder.appendingPathComponent(name)
            originals[file] = try Data(contentsOf: file)
            try code.write(to: file, atomically: true, encoding: .utf8)
        }
        return try body()
    }

    /// The exercise's files as `lab exercise reset` makes them from the lesson's folder. With
    /// `swappingVariants`, made as if the lesson's corrected variant were its article: the
    /// corrected file with its types and its `correctedVariant` named as the article's.
    static func startingFiles(_ lesson: LessonDefects, swappingVariants: Bool = false) throws -> [ExerciseSource.File] {
        let folder = packageRoot.appendingPathComponent(ExerciseSource.lessonFolder(for: lesson))
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
            files[name] = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        }
        if swappingVariants {
            let asArticle = { (text: String) in text.replacing(/\bCorrected(?=[A-Z])/, with: "Article") }
            var student = asArticle(try #require(files["Corrected.swift"]))
                .replacingOccurrences(of: "func correctedVariant(", with: "func \(ExerciseSource.articleEntry)(")
            if let ways = lesson.id.ways, !ways.variants.contains(.article) {
                // The exercise hands the article no way; the corrected variant gets its first.
                student = student.replacing(/(func \w+\(_ run: LessonRun, _ way: (\w+))\)/) { "\($0.1) = \($0.2).allCases[0])" }
            }
            // A fix that goes on in Corrected+Name.swift goes on in the student's one file.
            for name in files.keys.filter({ $0.hasPrefix("Corrected+") }).sorted() {
                student += "\n" + asArticle(files.removeValue(forKey: name)!)
            }
            files[ExerciseSource.studentFile] = student
        }
        return try ExerciseSource.files(for: lesson, lessonFiles: files)
    }

    /// The student's file as it starts.
    static func startingCode(_ lesson: LessonDefects) throws -> String {
        try #require(try startingFiles(lesson).first { $0.name == ExerciseSource.studentFile }).text
    }

    /// Runs the check's "see it" command as a student pastes it (`swift run X` is the built X: the
    /// running `swift test` holds the package's lock). The caller holds the exercise folders.
    static func paste(_ record: CheckRecord) throws -> ChildProcess.Finished {
        let see = "swift run lab exercise see "
        if record.command.hasPrefix(see) {
            return try runLab(["exercise", "see"] + record.command.dropFirst(see.count).split(separator: " ").map(String.init), timeout: 600)
        }
        let pasted = ChildProcess.buildDirectory.path + "/" + record.command.dropFirst("swift run ".count)
        let child = try ChildProcess(program: URL(fileURLWithPath: "/bin/sh"), ["-c", pasted])
        try child.start()
        return child.wait(timeout: 120)
    }

    /// The pasted command shows what the check saw: the same exit status for a one-run command,
    /// the same verdict from `lab exercise see`.
    static func expectPastedCommandShows(_ record: CheckRecord, _ shown: ChildProcess.Finished) throws {
        if record.command.hasPrefix("swift run lab exercise see ") {
            #expect(shown.status == (record.passed ? 0 : 1), "\(record.command): \(shown.stdout.suffix(400)) \(shown.stderr.suffix(400))")
            // On the starting code a check that holds is shown as not started.
            let holds = [.fixed, .verifies, .holds].contains(record.status)
            let mark = record.passed ? "✔ " : holds && !record.attempted ? "· " : "✗ "
            #expect(shown.stdout.contains(mark + record.check), "\(record.command): \(shown.stdout.suffix(400))")
            return
        }
        let wanted = try #require(record.detail.firstMatch(of: /exit (\d+)/).map { Int32($0.output.1)! }, "\(record.detail)")
        #expect(record.command.hasPrefix("swift run "), "\(record.command)")
        #expect(shown.status == wanted, "\(record.exercise) \(record.check): `\(record.command)` exited \(shown.status), the check saw \(wanted)")
    }

    /// The exercise's files holding the lesson's corrected logic (`startingFiles(swappingVariants:)`),
    /// less the shared file, which the exercise already has.
    static func correctedFiles(_ lesson: LessonDefects) throws -> [String: String] {
        let files = try startingFiles(lesson, swappingVariants: true).filter { $0.name != "Shared.swift" }
        return Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.text) })
    }

    /// `check --json` of an exercise holding the corrected logic with one piece of it replaced:
    /// a student's solution that is right but for that piece.
    static func checkCorrected(_ number: String, replacing piece: String, with replacement: String) throws -> [CheckRecord] {
        let lesson = try #require(Catalogue.lesson(named: number))
        var files = try correctedFiles(lesson)
        let student = try #require(files[ExerciseSource.studentFile])
        try #require(student.contains(piece), "\(piece)")
        files[ExerciseSource.studentFile] = student.replacingOccurrences(of: piece, with: replacement)
        let finished = try withExerciseFiles(lesson, holding: files) { try lab(["exercise", "check", number, "--json"]) }
        return try records(finished.stdout)
    }
}

