import Foundation
import LabKit
import LabPlatform
import LabVocabulary
import TestFolders
import TestServers
import TestThreads
import Testing

/// `lab doctor` on this machine, as a teacher runs it, and once for each thing that stops a
/// class: each named on one line of stderr, with exit 1.
struct DoctorTests {
    /// Every check's row, and the line to paste. Its exercise check builds in the package, so it
    /// takes its turn with the tests that write into the exercise folders.
    /// It leaves nothing behind: the lab's folder it made for its runs goes with it.
    @Test func aClassCanRunHere() async throws {
        let temporary = try scratchDirectory()
        let finished = try await ExerciseTests.takingTurns { try doctor([], environment: ["TMPDIR": temporary.path]) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter { $0.hasPrefix("download-lab-") } == [])
        #expect(finished.status == 0, "\(finished.stdout)\n\(finished.stderr)")
        #expect(finished.stderr.isEmpty, "\(finished.stderr)")
        let rows = finished.stdout.split(separator: "\n")
        for title in ["toolchain", "headers", "products", "loopback port", "output folder", "free disk", "curl", "aria2c",
                      "chromium-headless-shell", "nginx", "python3 jsonschema", "lesson run", "lab compare", "exercise check"] {
            #expect(rows.contains { $0.hasPrefix("  " + title + "  ") }, "no row for \(title) in\n\(finished.stdout)")
        }
        #expect(rows.contains { $0.hasPrefix("  lesson run") && $0.contains(" ok ") && $0.contains("SHA-256 checked from outside") })
        #expect(rows.contains { $0.hasPrefix("  exercise check") && $0.contains(" ok ") && $0.contains("5 of 5 checks hold") })
        // lab compare's references, the disk's among them, and a lesson as the comparison runs it.
        #expect(rows.contains { $0.hasPrefix("  lab compare") && $0.contains(" ok ") && $0.contains("disk-limit")
                                && $0.contains("foundation-floor") && $0.contains("lesson-03-outputstream") }, "\(finished.stdout)")
        #expect(rows.last?.hasPrefix("  lab doctor ") == true && rows.last?.contains(" · a class can run here") == true, "\(finished.stdout)")
    }

    /// `lab` alone in a folder, as when it was copied out, or the lessons were never built.
    @Test func programsNotBuiltAreNamed() async throws {
        let elsewhere = ExerciseTests.packageRoot.appendingPathComponent(".build/doctor-elsewhere-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        // A hard link: the products folder is found beside the program's own path.
        try FileManager.default.linkItem(at: Platform.productsFolder.appendingPathComponent("lab"), to: elsewhere.appendingPathComponent("lab"))
        let finished = try await OffThePool.run { try doctor([], program: elsewhere.appendingPathComponent("lab")) }
        #expect(finished.status == 1)
        // Each lesson and its exercise, `lab` and the floor.
        let programs = LessonID.allCases.count * 2 + 2
        #expect(finished.stderr == "lab doctor: products: \(programs) of the lab's \(programs) programs are not in \(elsewhere.path) "
                + "(lesson-00-small-file, exercise-00-small-file, lesson-01-in-memory and \(programs - 3) more): run `swift build` in the package's folder\n",
                "\(finished.stderr)")
        #expect(row("lesson run", in: finished) == ["not", "run", "needs", "products", "(above)"], "\(finished.stdout)")
        #expect(finished.stdout.contains("· 4 problems: products, lesson run, lab compare, exercise check"), "\(finished.stdout)")
    }

    /// Another server holds the port the class will use.
    @Test func aPortInUseIsNamed() async throws {
        let taken = try #require(boundLoopbackSocket())
        defer { close(taken.descriptor) }
        #expect(listen(taken.descriptor, 1) == 0)
        let finished = try await OffThePool.run { try doctor(["--port", String(taken.port)]) }
        #expect(finished.status == 1)
        #expect(finished.stderr == "lab doctor: loopback port: cannot listen on 127.0.0.1:\(taken.port): address already in use\n", "\(finished.stderr)")
        #expect(row("exercise check", in: finished) == ["not", "run", "needs", "loopback", "port", "(above)"], "\(finished.stdout)")
    }

    /// The lab's folder in the temporary folder is a file someone put there: nothing goes into it.
    @Test func anOutputFolderThatCannotBeUsedIsNamed() async throws {
        let temporary = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: temporary) }
        let planted = temporary.appendingPathComponent("download-lab-\(getuid())")
        try Data("not a folder".utf8).write(to: planted)
        let finished = try await OffThePool.run { try doctor([], environment: ["TMPDIR": temporary.path]) }
        #expect(finished.status == 1)
        #expect(finished.stderr == "lab doctor: output folder: cannot write \(planted.path): "
                + "not a folder of this user's alone, so the lab does not use it\n", "\(finished.stderr)")
        #expect(row("lesson run", in: finished) == ["not", "run", "needs", "output", "folder", "(above)"], "\(finished.stdout)")
        #expect(try Data(contentsOf: planted) == Data("not a folder".utf8))
    }

    /// A TMPDIR that names no folder: the toolchain's row says so (swift cannot answer without
    /// one), and the doctor leaves no folder of that path behind.
    @Test func aTemporaryFolderThatIsNotThereIsNamedAndNotLeft() async throws {
        let scratch = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let missing = scratch.appendingPathComponent("missing/tmp")
        let finished = try await OffThePool.run { try doctor([], environment: ["TMPDIR": missing.path]) }
        #expect(finished.status == 1)
        #expect(finished.stderr.hasPrefix("lab doctor: toolchain: TMPDIR is \(missing.path), which is not a folder this user can write"),
                "\(finished.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
    }

    /// A python3 that cannot import jsonschema, as on a stock Mac: `swift test`'s HAR tests would
    /// skip, so the doctor names it on one line and exits 1.
    @Test func aMissingTestToolIsNamed() async throws {
        let finished = try await doctor(withBroken: "python3", saying: "ModuleNotFoundError: No module named 'jsonschema'", exit: 1)
        #expect(finished.status == 1)
        #expect(finished.stderr == "lab doctor: python3 jsonschema: not found: the HAR tests check each archive against HAR 1.2 "
                + "with it (python3 -m pip install jsonschema)\n", "\(finished.stderr)")
        #expect(finished.stdout.contains("· 1 problem: python3 jsonschema"), "\(finished.stdout)")
    }

    /// A curl that cannot download: `lab compare` would stop at its first reference, so the
    /// doctor names it on one line, from the comparison's own code.
    @Test func aReferenceThatFailsIsNamed() async throws {
        let finished = try await doctor(withBroken: "curl", saying: "curl: (7) Failed to connect", exit: 7)
        #expect(finished.status == 1)
        let lines = finished.stderr.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("lab doctor: lab compare: lab compare would stop here: curl could not download http://127.0.0.1:")
                && lines[0].hasSuffix(": curl: (7) Failed to connect"), "\(finished.stderr)")
        #expect(finished.stdout.contains("· 1 problem: lab compare"), "\(finished.stdout)")
    }

    /// `lab doctor` with a program of `name` first on PATH that prints `line` on stderr and exits
    /// `status`, whatever it is asked: a tool that is there and does not work.
    private func doctor(withBroken name: String, saying line: String, exit status: Int32) async throws -> ChildProcess.Finished {
        let tools = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: tools) }
        let program = tools.appendingPathComponent(name)
        try "#!/bin/sh\necho \"\(line)\" >&2\nexit \(status)\n".write(to: program, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: program.path)
        let path = tools.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        return try await ExerciseTests.takingTurns { try doctor([], environment: ["PATH": path]) }
    }

    /// The words after a check's name in the table.
    private func row(_ title: String, in finished: ChildProcess.Finished) -> [Substring] {
        let line = finished.stdout.split(separator: "\n").first { $0.hasPrefix("  \(title)  ") } ?? ""
        return line.dropFirst(title.count + 2).split(separator: " ")
    }

    /// `lab doctor` (or `program`) run in the package folder.
    private func doctor(_ arguments: [String], program: URL? = nil, environment: [String: String] = [:]) throws -> ChildProcess.Finished {
        let child = try ChildProcess(program: program ?? Platform.productsFolder.appendingPathComponent("lab"),
                                     ["doctor", "--ignore-lock"] + arguments)
        child.process.currentDirectoryURL = ExerciseTests.packageRoot
        child.process.environment = TestFolders.childEnvironment(environment)
        try child.start()
        return child.wait(timeout: 300)
    }
}
