import Foundation
import LabFixtures
import LabKit
import LabVocabulary
import TestThreads
import Testing

/// A package folder handed out with its `.build`, as a teacher who built it once might: what the
/// lab kept there for one student (the class key, the outbox, the exercises' progress) is not
/// the next student's. Each copy is told apart by its folder's device and inode.
struct CopiedFolderTests {
    /// A folder that `lab` takes for the package: a manifest, the exercises, lesson 00's sources.
    private func workspace() throws -> URL {
        let folder = try scratchDirectory()
        try Data("// a copy of the package\n".utf8).write(to: folder.appendingPathComponent("Package.swift"))
        let lesson = folder.appendingPathComponent("Sources/lesson-00-small-file")
        try FileManager.default.createDirectory(at: lesson.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: ExerciseTests.packageRoot.appendingPathComponent("Sources/lesson-00-small-file"), to: lesson)
        let exercise = folder.appendingPathComponent("Sources/Exercises/00-small-file")
        try FileManager.default.createDirectory(at: exercise, withIntermediateDirectories: true)
        try Data("// edited by a student\n".utf8).write(to: exercise.appendingPathComponent("Article.swift"))
        return folder
    }

    private func identity(of folder: URL) -> String {
        var facts = stat()
        _ = stat(folder.path, &facts)
        return "\(facts.st_dev):\(facts.st_ino)"
    }

    private func lab(_ arguments: [String], in folder: URL) throws -> ChildProcess.Finished {
        let child = try ChildProcess("lab", arguments)
        child.process.currentDirectoryURL = folder
        try child.start()
        return child.wait(timeout: 60)
    }

    /// Another copy's key is replaced, not used, and a result it left in the outbox is not sent
    /// under this student's name.
    @Test func anotherCopysKeyAndOutboxAreNotThisStudents() async throws {
        let folder = try workspace()
        defer { try? FileManager.default.removeItem(at: folder) }
        let build = folder.appendingPathComponent(".build")
        let outbox = build.appendingPathComponent("class-outbox")
        try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
        let theirs = String(repeating: "a", count: 32)
        try Data("\(theirs)\n1:2\n".utf8).write(to: build.appendingPathComponent("class-student-key"))
        let left = ClassSubmission(id: UUID().uuidString.lowercased(), name: "Grace", studentKey: theirs, checks: [], comparison: nil,
                                   createdAt: "2026-11-27T10:00:00Z")
        try JSONEncoder().encode(left).write(to: outbox.appendingPathComponent("\(left.id).json"))
        // Port 9 has no server: a result sent there would fail with exit 69, not 65.
        let finished = try await OffThePool.run { try lab(["class", "submit", "http://127.0.0.1:9/class/abcdefgh", "--name", "Ada"], in: folder) }
        #expect(finished.status == 65, "\(finished.stderr)")
        #expect(finished.stderr == "lab class submit: 1 entry in \(outbox.path) is not this copy's submission, left alone: "
                + "\(left.id).json (another copy's)\n", "\(finished.stderr)")
        let key = try String(contentsOf: build.appendingPathComponent("class-student-key"), encoding: .utf8).split(separator: "\n")
        #expect(key.count == 2 && key[0] != theirs[...] && key[0].count == 64 && String(key[1]) == identity(of: folder), "\(key)")
        #expect(FileManager.default.fileExists(atPath: outbox.appendingPathComponent("\(left.id).json").path))
    }

    /// Progress another copy wrote says nothing of this copy's code; this copy's own does.
    @Test func anotherCopysProgressIsNotThisStudents() async throws {
        let folder = try workspace()
        defer { try? FileManager.default.removeItem(at: folder) }
        let progress = folder.appendingPathComponent(".build/lab-exercises/progress.json")
        try FileManager.default.createDirectory(at: progress.deletingLastPathComponent(), withIntermediateDirectories: true)
        let code = try FileDigest.sha256Hex(of: folder.appendingPathComponent("Sources/Exercises/00-small-file/Article.swift"))
        func plant(copy: String) throws {
            try Data(#"{"copy":"\#(copy)","exercises":{"00-small-file":{"compiles":true,"failing":[],"hintsShown":{},"sourceSHA256":"\#(code)","total":5}}}"#.utf8)
                .write(to: progress)
        }
        try plant(copy: "1:2")
        let theirs = try await OffThePool.run { try lab(["exercise"], in: folder) }
        #expect(theirs.stdout.contains("  00  small-file               edited, not checked yet (5 checks)"), "\(theirs.stdout)")
        try plant(copy: identity(of: folder))
        let mine = try await OffThePool.run { try lab(["exercise"], in: folder) }
        #expect(mine.stdout.contains("  00  small-file               done"), "\(mine.stdout)")
    }
}
