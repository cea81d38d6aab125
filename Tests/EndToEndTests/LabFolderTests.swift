import Foundation
import LabKit
import TestFolders
import TestThreads
import Testing

/// The lab's own folders under `.build`, planted as links to folders outside: refused with one
/// line, and nothing written through them.
struct LabFolderTests {
    @Test func aLinkedExercisesFolderIsRefused() async throws {
        try await ExerciseTests.takingTurns {
            try ExerciseTests.exclusively {
                let folder = ExerciseTests.progressFile.deletingLastPathComponent()
                let aside = folder.deletingLastPathComponent().appendingPathComponent("lab-exercises-aside-\(UUID().uuidString)")
                let outside = try scratchDirectory()
                let hadOne = FileManager.default.fileExists(atPath: folder.path)
                if hadOne { try FileManager.default.moveItem(at: folder, to: aside) }
                defer {
                    try? FileManager.default.removeItem(at: folder)  // the link, not what it points to
                    if hadOne { try? FileManager.default.moveItem(at: aside, to: folder) }
                    try? FileManager.default.removeItem(at: outside)
                }
                try FileManager.default.createSymbolicLink(at: folder, withDestinationURL: outside)
                let finished = try ExerciseTests.lab(["exercise", "hint", "02"])
                #expect(finished.status != 0)
                // `hint` checks the code first, and its build lock lives in that folder.
                #expect(finished.stderr == "lab exercise hint: cannot lock \(folder.path)/build.lock: \(folder.path): it is not a folder of "
                        + "the lab's own (a link, or a file): nothing is written through it\n", "\(finished.stderr)")
                let written = try FileManager.default.contentsOfDirectory(atPath: outside.path)
                #expect(written.isEmpty, "\(written)")
            }
        }
    }

    /// What the programs the tests start write to their temporary folders lands in the tests' own
    /// folder, which goes when the tests end: a lesson run without `--output` leaves nothing in
    /// the system's temporary folder.
    @Test func childrenWriteInsideTheTestsFolder() throws {
        let finished = try ChildProcess.run("lesson-03-outputstream", ["--size", "64KiB", "--json", "--quiet"], timeout: 60)
        #expect(finished.status == 0, "\(finished.stderr)")
        let output = try finished.result().output
        #expect(output.hasPrefix(TestFolders.root.path + "/download-lab-\(getuid())/lesson-03-outputstream-"), "\(output)")
        let system = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let run = URL(fileURLWithPath: output).deletingLastPathComponent().lastPathComponent
        #expect(!FileManager.default.fileExists(atPath: "\(system)/download-lab-\(getuid())/\(run)"))
        #expect(TestFolders.root.path.hasPrefix(system))
    }
}
