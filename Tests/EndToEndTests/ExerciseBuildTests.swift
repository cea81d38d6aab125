import Foundation
import LabCatalogue
import TestThreads
import Testing

/// How `lab exercise check` builds a student's code, and what it runs: the compiler's first
/// error, and the program `swift build` just made, wherever `lab` itself was built.
struct ExerciseBuildTests {
    /// `lab` built somewhere else, as Xcode builds it into DerivedData, with `lab-measure` beside
    /// it as a build of `lab` puts it: the check runs the exercise `swift build` just built in the
    /// package, not a program beside `lab`, which is not there.
    @Test func aLabBuiltElsewhereRunsWhatItJustBuilt() async throws {
        try await ExerciseTests.takingTurns {
            let elsewhere = try scratchDirectory()
            defer { try? FileManager.default.removeItem(at: elsewhere) }
            for name in ["lab", "lab-measure"] {
                try FileManager.default.copyItem(at: ChildProcess.buildDirectory.appendingPathComponent(name),
                                                 to: elsewhere.appendingPathComponent(name))
            }
            let lesson = try #require(Catalogue.lesson(named: "07"))
            let child = try ChildProcess(program: elsewhere.appendingPathComponent("lab"), ["exercise", "check", "07", "--json", "--ignore-lock"])
            child.process.currentDirectoryURL = ExerciseTests.packageRoot
            try child.start()
            let finished = child.wait(timeout: 600)
            let records = try ExerciseTests.records(finished.stdout)
            #expect(records.map(\.check) == lesson.checks.map(\.id), "\(finished.stderr)")
            #expect(Set(records.filter { !$0.passed }.map(\.check)) == lesson.failingAtStart, "\(records.map(\.detail))")
            // Each check ran the program, and the defects showed.
            #expect(records.allSatisfy { $0.status != .notRun }, "\(records.map(\.detail))")
            #expect(records.filter { $0.symptomSeen == true }.map(\.check) == lesson.defects.map(\.id), "\(records.map(\.detail))")
        }
    }

    /// The first error, whole, for the student to read (its code excerpt on stdout), and its line
    /// on stderr: one line, where a script looks.
    @Test func codeThatDoesNotCompileGivesTheFirstErrorWhole() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "03"))
            var lines = try ExerciseTests.startingCode(lesson).components(separatedBy: "\n")
            let line = try #require(lines.firstIndex { $0.contains("func downloadFile(") }) + 2
            lines.insert("        let broken: Int = \"not a number\"", at: line - 1)
            let finished = try ExerciseTests.withExercise(lesson, holding: lines.joined(separator: "\n")) { try ExerciseTests.lab(["exercise", "check", "03"]) }
            #expect(finished.status == 1)
            let errorLines = finished.stderr.split(separator: "\n")
            #expect(errorLines.count == 1, "\(finished.stderr)")
            let place = "Sources/Exercises/03-outputstream/Article.swift:\(line):"
            #expect(finished.stderr.hasPrefix("lab exercise check: " + place), "\(finished.stderr)")
            #expect(finished.stderr.contains("error: cannot convert value of type 'String'"), "\(finished.stderr)")
            // On stdout, the same error with the code under it, and nothing of SwiftPM's.
            #expect(finished.stdout.hasPrefix(place), "\(finished.stdout)")
            #expect(finished.stdout.contains("\(line) |         let broken: Int = \"not a number\""), "\(finished.stdout)")
            #expect(!finished.stdout.contains("Compiling") && !finished.stdout.contains("[1/"), "\(finished.stdout)")
        }
    }

    /// A non-Sendable value sent into a task: the compiler's notes come with its error, and no
    /// Mutex advice, which would not fix it.
    @Test func aSendingErrorKeepsItsNotesAndGetsNoMutexAdvice() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "00"))
            let starting = try ExerciseTests.startingCode(lesson)
            let call = "        fetchInOneCall(URLRequest(url: run.url), way, run) { data, _, _ in\n"
            try #require(starting.contains(call))
            let sending = """
                        final class Counter { var count = 0 }
                        let counter = Counter()
                        Task.detached { counter.count += 1 }
                        counter.count += 1

                """
            let finished = try ExerciseTests.withExercise(lesson, holding: starting.replacingOccurrences(of: call, with: sending + call)) {
                try ExerciseTests.lab(["exercise", "check", "00"])
            }
            #expect(finished.status == 1)
            #expect(finished.stderr.contains("risks causing data races") && !finished.stderr.contains("Mutex"), "\(finished.stderr)")
            #expect(finished.stdout.contains(": note: ") || finished.stdout.contains("`- note: "), "\(finished.stdout)")
        }
    }
}
