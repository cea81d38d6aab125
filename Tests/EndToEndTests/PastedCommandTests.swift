import Foundation
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

    /// `lab exercise see` prints each run as `$ swift run …`: its URL, with `?` and `&` in it,
    /// reaches the program as one word.
    @Test func aRunThatSeeShowsPastesWhole() async throws {
        let seen = try await ExerciseTests.takingTurns { try ExerciseTests.lab(["exercise", "see", "00", "status-ignored"]) }
        let line = try #require(seen.stdout.split(separator: "\n").first { $0.hasPrefix("$ swift run exercise-00-small-file ") }, "\(seen.stdout)")
        let rest = line.dropFirst("$ swift run exercise-00-small-file ".count)
        let words = try await OffThePool.run { try Self.shell("printf '%s\\n' " + rest) }.split(separator: "\n", omittingEmptySubsequences: false)
        let url = try #require(words.firstIndex(of: "--url").map { words[$0 + 1] }, "\(words)")
        #expect(url.hasPrefix("http://127.0.0.1:") && url.contains("?size=1048576&faults=status:404&run="), "\(url)")
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
