import Foundation
import LabCatalogue
import LabVocabulary
import TestThreads
import Testing

/// The commands the lab prints are pasted into a shell: each word must reach the program whole.
struct PastedCommandTests {
    /// Words with what a shell splits or expands on, read back by /bin/sh one per line.
    @Test func quotedWordsComeBackWhole() async throws {
        let words = ["plain", "", "two words", "a&b", "it's", "$HOME", "say \"hi\"", "*", "?x=1&y=2", "back\\slash"]
        let printed = try await OffThePool.run { try Self.shell("printf '%s\\n' " + ShellWord.line(words)) }
        #expect(printed == words.joined(separator: "\n") + "\n")
    }

    /// `lab exercise see` prints each run as `$ swift run …`, each word reaching the program
    /// whole. Its URL is sealed: the fault it plays is not in it.
    @Test func aRunThatSeeShowsPastesWhole() async throws {
        let seen = try await ExerciseTests.takingTurns { try ExerciseTests.lab(["exercise", "see", "00", "status-ignored"]) }
        let line = try #require(seen.stdout.split(separator: "\n").first { $0.hasPrefix("$ swift run exercise-00-small-file ") }, "\(seen.stdout)")
        let rest = line.dropFirst("$ swift run exercise-00-small-file ".count)
        let words = try await OffThePool.run { try Self.shell("printf '%s\\n' " + rest) }.split(separator: "\n", omittingEmptySubsequences: false)
        let url = try #require(words.firstIndex(of: "--url").map { words[$0 + 1] }, "\(words)")
        #expect(url.hasPrefix("http://127.0.0.1:") && url.contains("/sealed/") && !url.contains("faults"), "\(url)")
        #expect(words.contains("--sha256") && words.contains("--output"), "\(words)")
    }

    /// Every check's command, as `check` prints it under "see it" and the clean check's first
    /// hint gives it: /bin/sh hands the program the trial's own words.
    @Test func everyChecksCommandPastesWhole() async throws {
        var expected: [[String]] = []
        var script = ""
        for lesson in Catalogue.lessons {
            for check in lesson.everyCheck {
                let trial = check.trial
                let line = trial.commandLine(executable: lesson.id.exerciseExecutable)
                let prefix = "swift run \(lesson.id.exerciseExecutable) "
                try #require(line.hasPrefix(prefix), "\(line)")
                if check.kind == .clean { #expect(check.hints.contains { $0.hasSuffix(line) }, "\(check.hints)") }
                expected.append(["--size", ByteSize.format(trial.size), "--faults",
                                 trial.faults.isNone ? "" : trial.faults.description] + trial.everyRun + trial.arguments)
                script += "printf '%s\\n' \(line.dropFirst(prefix.count)); echo '----'\n"
            }
        }
        let printed = try await OffThePool.run { try Self.shell(script) }
        let runs = printed.components(separatedBy: "----\n").dropLast().map { $0.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
        #expect(runs.count == expected.count)
        for (got, wanted) in zip(runs, expected) { #expect(got == wanted) }
    }

    /// `lab class serve` prints the commands students and the teacher type: each pastes whole,
    /// with a class folder whose path has a space in it.
    @Test func theClassServersCommandsPasteWhole() async throws {
        let data = try scratchDirectory().appendingPathComponent("class data")
        let server = try ClassServerProcess(data: data)
        defer { server.stop() }
        let commands = server.child.stdoutSoFar.split(separator: "\n").filter { $0.hasPrefix("  swift run ") }
            .map { String($0.dropFirst("  swift run ".count)) }
        #expect(commands.count == 3, "\(server.child.stdoutSoFar)")
        var pasted: [[String]] = []
        for command in commands {
            pasted.append(try await OffThePool.run { try Self.shell("printf '%s\\n' " + command) }.split(separator: "\n").map(String.init))
        }
        let submit = ["--submit", server.classURL, "--name", "Your Name"]
        #expect(pasted == [["lab", "exercise", "check", "--all"] + submit, ["lab", "compare"] + submit,
                           ["lab", "class", "export", "--data", data.path, "--format", "csv", "-o", "grades.csv"]])
    }

    /// What /bin/sh prints for `script`.
    static func shell(_ script: String) throws -> String {
        let child = try ChildProcess(program: URL(fileURLWithPath: "/bin/sh"), ["-c", script])
        try child.start()
        let finished = child.wait(timeout: 30)
        #expect(finished.status == 0, "\(finished.stderr)")
        return finished.stdout
    }
}
