import Foundation
import LabCatalogue
import LabVocabulary
import Testing

/// Code that starts a program (curl, say) to do its work proves nothing of the app's own code:
/// an iOS app cannot start one. Each way of starting one is seen, in the process that ran the
/// code: the lesson's, lesson 10's later launch, lesson 09's app.
extension GamingTests {
    /// How the code starts `/bin/sh -c :`. Each is seen by another of the system's answers.
    enum StartsAProgram: String, CaseIterable, Sendable {
        /// Foundation's Process, waited for: getrusage's RUSAGE_CHILDREN.
        case waitedFor = "waited-for"
        /// posix_spawn, never waited for: waitid finds the child, running or ended.
        case neverWaitedFor = "never-waited-for"
        /// SIGCHLD ignored first, so the system reaps the child unseen: the ignored signal.
        case reapedUnseen = "reaped-unseen"

        var code: String {
            let spawn = """
                var pid: pid_t = 0
                let words: [String] = ["/bin/sh", "-c", ":"]
                let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
                _ = posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ)
                """
            return switch self {
            case .waitedFor: """
                let child = Process()
                child.executableURL = URL(fileURLWithPath: "/bin/sh")
                child.arguments = ["-c", ":"]
                try? child.run()
                child.waitUntilExit()
                """
            case .neverWaitedFor: spawn
            case .reapedUnseen: "signal(SIGCHLD, SIG_IGN)\n" + spawn
            }
        }
    }

    /// The corrected code of `number` with `code` run where `piece` begins; its check `check`.
    static func check(_ number: String, _ check: String, running code: String, at piece: String) async throws -> CheckRecord {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: number))
            var files = try ExerciseTests.correctedFiles(lesson)
            let student = try #require(files[ExerciseSource.studentFile])
            try #require(student.contains(piece), "\(piece)")
            files[ExerciseSource.studentFile] = student.replacingOccurrences(of: piece, with: piece + "\n" + code + "\n")
            let finished = try ExerciseTests.withExerciseFiles(lesson, holding: files) {
                try ExerciseTests.lab(["exercise", "check", number, "--only", check, "--json"])
            }
            return try #require(try ExerciseTests.records(finished.stdout).first { $0.check == check }, "\(finished.stdout)")
        }
    }

    static let programStartedDetail = "the program started another program (a child process)"

    @Test(arguments: StartsAProgram.allCases)
    func aProgramStartedByTheCodeFailsTheCheck(_ way: StartsAProgram) async throws {
        let record = try await Self.check("00", "clean", running: way.code,
                                          at: "    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {")
        #expect(!record.passed && record.detail.contains(Self.programStartedDetail), "\(record.detail)")
    }

    /// Lesson 10's second launch runs in a process of its own, which tells the first.
    @Test func aProgramStartedInALaterLaunchFailsTheCheck() async throws {
        let onlyLater = "if ProcessInfo.processInfo.environment[\"DOWNLOAD_LAB_LATER_LAUNCH\"] != nil {\n"
            + StartsAProgram.waitedFor.code + "\n}"
        let record = try await Self.check("10", "clean", running: onlyLater,
                                          at: "    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {")
        #expect(!record.passed && record.detail.contains(Self.programStartedDetail), "\(record.detail)")
    }

    /// Lesson 09's code runs in the app's process, which tells the phone.
    @Test func aProgramStartedByTheAppFailsTheCheck() async throws {
        let record = try await Self.check("09", "clean", running: StartsAProgram.neverWaitedFor.code, at: "    func startTapped() {")
        #expect(!record.passed && record.detail.contains(Self.programStartedDetail), "\(record.detail)")
    }
}
