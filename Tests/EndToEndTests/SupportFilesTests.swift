import Foundation
import LabCatalogue
import LabKit
import Testing

/// Only Article.swift is the student's: the exercise's other files are the lab's (lesson 06's
/// crowd and its watchdog, the wiring), and a check of changed ones would judge the lab's code.
@Suite(.serialized) struct SupportFilesTests {
    /// A watchdog with all the patience in the world lets parked workers pass: `check` refuses the
    /// changed Shared.swift in one line, and `reset --keep-article` puts it back and keeps the
    /// student's Article.swift.
    @Test func aChangedSharedFileIsRefusedAndPutBackWithoutTheArticle() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = Catalogue.lesson(.runLoopThread)
            let starting = Dictionary(uniqueKeysWithValues: try ExerciseTests.startingFiles(lesson).map { ($0.name, $0.text) })
            let shared = try #require(starting["Shared.swift"])
            try #require(shared.contains("static let patience = 0.5"))
            let patient = shared.replacingOccurrences(of: "static let patience = 0.5", with: "static let patience = 1000.0")
            let article = try #require(starting[ExerciseSource.studentFile]) + "\n// my fix goes here\n"
            let folder = ExerciseTests.packageRoot.appendingPathComponent(ExerciseSource.folder(for: lesson))
            try ExerciseTests.withExerciseFiles(lesson, holding: ["Shared.swift": patient, ExerciseSource.studentFile: article]) {
                let refused = try ExerciseTests.lab(["exercise", "check", "06"])
                #expect(refused.status == 1)
                let lines = refused.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines[0].contains("06-runloop-thread/Shared.swift is not what the exercise started with")
                        && lines[0].contains("reset 06 --keep-article"), "\(refused.stderr)")
                #expect(!refused.stdout.contains("parked-workers"), "no check ran: \(refused.stdout)")

                let put = try ExerciseTests.lab(["exercise", "reset", "06", "--keep-article"])
                #expect(put.status == 0, "\(put.stderr)")
                #expect(try String(contentsOf: folder.appendingPathComponent("Shared.swift"), encoding: .utf8) == shared)
                #expect(try String(contentsOf: folder.appendingPathComponent(ExerciseSource.studentFile), encoding: .utf8) == article)
                let checked = try ExerciseTests.lab(["exercise", "check", "06", "--only", "parked-workers", "--json"])
                let record = try #require(try ExerciseTests.records(checked.stdout).first { $0.check == "parked-workers" })
                #expect(record.status == .stillThere, "\(record.detail)")
            }
        }
    }

    /// A Swift file of the student's own beside the exercise is refused too (it could declare
    /// what the lab's files call), and `--keep-article` moves it into the lab's folder, not away.
    @Test func anAddedSwiftFileIsRefusedAndKept() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = Catalogue.lesson(.smallFile)
            let folder = ExerciseTests.packageRoot.appendingPathComponent(ExerciseSource.folder(for: lesson))
            let added = folder.appendingPathComponent("Helpers.swift")
            let kept = ExerciseTests.packageRoot.appendingPathComponent(".build/lab-exercises/\(lesson.id.rawValue)-Helpers.swift")
            try "// a helper\n".write(to: added, atomically: true, encoding: .utf8)
            defer {
                try? FileManager.default.removeItem(at: added)
                try? FileManager.default.removeItem(at: kept)
            }
            let refused = try ExerciseTests.lab(["exercise", "check", "00"])
            #expect(refused.status == 1 && refused.stderr.contains("00-small-file/Helpers.swift is not what the exercise started with"),
                    "\(refused.stderr)")
            let put = try ExerciseTests.lab(["exercise", "reset", "00", "--keep-article"])
            #expect(put.status == 0 && !FileManager.default.fileExists(atPath: added.path), "\(put.stderr)")
            #expect(try String(contentsOf: kept, encoding: .utf8) == "// a helper\n")
        }
    }
}
