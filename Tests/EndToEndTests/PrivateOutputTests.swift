import Foundation
import LabKit
import LabVocabulary
import TestFolders
import Testing

/// Without `--output`, each run of a lesson writes in a folder of its own, inside a folder of
/// the user's own: two runs of the same lesson at once never share a file.
struct PrivateOutputTests {
    @Test func twoRunsAtOnceWriteToTwoPrivateFolders() throws {
        let runs = try (0..<2).map { _ in
            let child = try ChildProcess("lesson-03-outputstream", ["--size", "8MiB", "--json", "--quiet"])
            try child.start()
            return child
        }
        let records = try runs.map { child in
            let finished = child.wait(timeout: 120)
            #expect(finished.status == 0, "\(finished.stderr)")
            return try JSONDecoder().decode(LessonResult.self, from: Data(finished.stdout.utf8))
        }
        let folders = records.map { URL(fileURLWithPath: $0.output).deletingLastPathComponent() }
        #expect(folders[0] != folders[1])
        // The children's TMPDIR is the tests' folder (`TestFolders`).
        let mine = TestFolders.root.appendingPathComponent("download-lab-\(getuid())")
        for folder in folders {
            #expect(folder.deletingLastPathComponent().path == mine.path, "\(folder.path)")
        }
        var facts = stat()
        #expect(lstat(mine.path, &facts) == 0)
        #expect(facts.st_mode & 0o777 == 0o700 && facts.st_uid == getuid())
    }

    /// Two users on one machine, the same lesson at once, default output, one TMPDIR: each
    /// downloads through its own embedded server into a folder only it can open. Run where the
    /// tests run as root, with `runuser` to be `nobody`, and a build `nobody` can read.
    @Test(.enabled(if: PrivateOutputTests.canRunAsNobody, "needs root, runuser, and a build folder others may read"))
    func twoUsersAtOnceNeverShareAFile() throws {
        let lesson = ChildProcess.buildDirectory.appendingPathComponent("lesson-03-outputstream").path
        let arguments = ["--size", "8MiB", "--json", "--quiet"]
        let runuser = try #require(executable(named: "runuser"))
        let children = [
            try ChildProcess("lesson-03-outputstream", arguments),
            try ChildProcess(program: runuser, ["-u", "nobody", "--", lesson] + arguments),
        ]
        // One TMPDIR that both users may write in, as /tmp is.
        let shared = try scratchDirectory()
        #expect(chmod(shared.path, 0o1777) == 0)
        for child in children {
            child.process.environment = TestFolders.childEnvironment(["TMPDIR": shared.path])
            try child.start()
        }
        let records = try children.map { child in
            let finished = child.wait(timeout: 120)
            #expect(finished.status == 0, "\(finished.stderr)")
            return try JSONDecoder().decode(LessonResult.self, from: Data(finished.stdout.utf8))
        }
        #expect(records.allSatisfy { $0.outcome == .verified })
        let users = records.map { URL(fileURLWithPath: $0.output).deletingLastPathComponent().deletingLastPathComponent().lastPathComponent }
        #expect(users == ["download-lab-\(getuid())", "download-lab-65534"], "\(records.map(\.output))")
    }

    static var canRunAsNobody: Bool {
        guard getuid() == 0, let runuser = executable(named: "runuser"),
              let finished = try? ChildProcess.runProgram(runuser, ["-u", "nobody", "--", "test", "-x",
                  ChildProcess.buildDirectory.appendingPathComponent("lesson-03-outputstream").path], timeout: 20)
        else { return false }
        return finished.status == 0
    }

    /// A lab folder that is a link, or one that others may write, is not used: one line, exit 74,
    /// and nothing written where it points.
    @Test(arguments: ["a link", "writable by others"])
    func aPlantedLabFolderIsRefused(planted: String) throws {
        let temporary = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: temporary) }
        let labFolder = temporary.appendingPathComponent("download-lab-\(getuid())")
        let elsewhere = temporary.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        if planted == "a link" {
            try FileManager.default.createSymbolicLink(at: labFolder, withDestinationURL: elsewhere)
        } else {
            try FileManager.default.createDirectory(at: labFolder, withIntermediateDirectories: true)
            #expect(chmod(labFolder.path, 0o777) == 0)
        }
        let child = try ChildProcess("lesson-03-outputstream", ["--size", "1MiB"])
        child.process.environment = TestFolders.childEnvironment(["TMPDIR": temporary.path])
        try child.start()
        let finished = child.wait(timeout: 60)
        #expect(finished.status == ExitStatus.localIOFailed.rawValue, "\(finished.stderr)")
        #expect(finished.stderr.split(separator: "\n").last
                == "lesson-03-outputstream: cannot write \(labFolder.path): not a folder of this user's alone, so the lab does not use it",
                "\(finished.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
    }
}
