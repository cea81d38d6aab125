import Foundation
import LabClass
import LabReport
import LabVocabulary
import TestFolders
import Testing

/// The smaller findings of a hostile sweep, each a line or a mode: one line per error however
/// long or strange the input, and the class's files and exports as private as they should be.
struct HostileMinorTests {
    /// A 100,000-character argument gets one line, cut at `Console.longestErrorLine`; a
    /// right-to-left override is shown escaped, never raw.
    @Test func errorLinesAreBoundedAndShowNoInvisibleCharacters() throws {
        let long = try ChildProcess.run(LessonID.backgroundSession.executable, ["--life", String(repeating: "x", count: 100_000)], timeout: 30)
        #expect(long.status == 64)
        let lines = long.stderr.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 2 && lines[0].count == 2_000 && lines[0].hasSuffix("…"), "\(long.stderr.prefix(200))")

        let reversed = try ChildProcess.run("lab", ["exercise", "see", "00", "\u{202E}clean"], timeout: 30)
        #expect(reversed.status == 64)
        #expect(!reversed.stderr.unicodeScalars.contains("\u{202E}"))
        #expect(reversed.stderr.contains("\"\\u{202E}clean\""), "\(reversed.stderr)")
    }

    /// An empty `TMPDIR` means /tmp, as it does for the C library: a lesson never makes its folder
    /// at the root of the file system. The run's folder, and the lab's folder if this test made
    /// it, are removed.
    @Test func anEmptyTMPDIRMeansTmp() throws {
        let labFolder = "/tmp/download-lab-\(getuid())"
        let existed = FileManager.default.fileExists(atPath: labFolder)
        let child = try ChildProcess(LessonID.smallFile.executable, ["--size", "1KiB", "--json", "--quiet"])
        child.process.environment = TestFolders.childEnvironment(["TMPDIR": ""])
        try child.start()
        let finished = child.wait(timeout: 60)
        let output = try finished.result().output
        defer { try? FileManager.default.removeItem(atPath: existed ? (output as NSString).deletingLastPathComponent : labFolder) }
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(output.hasPrefix(labFolder + "/"), "\(output)")
        #expect(!FileManager.default.fileExists(atPath: "/download-lab-\(getuid())"))
    }

    /// The class's database holds the teacher's token: its owner's alone. An empty `--data` is
    /// refused rather than taken for the current folder.
    @Test func theClassFileIsPrivateAndItsFolderNamed() throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        _ = try ClassStore(folder: folder)
        var facts = stat()
        #expect(stat(folder.appendingPathComponent(ClassStore.fileName).path, &facts) == 0)
        #expect(facts.st_mode & 0o777 == 0o600)

        let empty = try ChildProcess.run("lab", ["class", "serve", "--data", "", "--listen", "127.0.0.1:0"], timeout: 30)
        #expect(empty.status == 64)
        #expect(empty.stderr == "lab class serve: --data: give a folder for the class\n", "\(empty.stderr)")
    }

    /// A fullwidth formula sign first is a formula to some spreadsheets: neutralised as `=` is.
    @Test func fullwidthFormulaSignsAreNeutralisedInTheCSV() {
        let names = ["＝1+1", "＋1", "－1", "＠SUM(A1)"]
        let grid = ClassGrid(students: names, columns: [], cells: [], comparisons: [], submissions: 0)
        let rows = ClassExport.csv(grid).components(separatedBy: "\r\n").dropFirst().filter { !$0.isEmpty }
        #expect(rows.map { String($0.prefix { $0 != "," }) } == names.map { "'" + $0 }, "\(rows)")
    }

    /// `-o` naming a link, for the exports that write a folder: refused as for csv, and nothing
    /// written where it points.
    @Test func aLinkedExportFolderIsRefused() throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let data = folder.appendingPathComponent("class")
        _ = try ClassStore(folder: data)
        let elsewhere = folder.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: elsewhere)
        for format in ["exercism", "gradescope"] {
            let refused = try ChildProcess.run("lab", ["class", "export", "--data", data.path, "--format", format, "-o", link.path])
            #expect(refused.status == 73, "\(refused.stderr)")
            #expect(refused.stderr.contains("it is not a folder of the lab's own"), "\(refused.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty)
    }

    /// What waits in the outbox but is no submission (garbage, a FIFO, a folder, a 4 GiB sparse
    /// file) is named in one line, exit 65, and left alone; it is not read whole.
    @Test func anOutboxOfStraysIsSaidNotSkipped() throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let outbox = folder.appendingPathComponent(".build/class-outbox")
        try FileManager.default.createDirectory(at: outbox.appendingPathComponent("a-folder.json"), withIntermediateDirectories: true)
        try Data("not json".utf8).write(to: outbox.appendingPathComponent("garbage.json"))
        #expect(mkfifo(outbox.appendingPathComponent("fifo.json").path, 0o600) == 0)
        #expect(FileManager.default.createFile(atPath: outbox.appendingPathComponent("huge.json").path, contents: nil))
        #expect(truncate(outbox.appendingPathComponent("huge.json").path, 4 << 30) == 0)
        let child = try ChildProcess("lab", ["class", "submit", "http://127.0.0.1:9/class/abcdefgh", "--name", "Ada"])
        child.process.currentDirectoryURL = folder
        let started = Date()
        try child.start()
        let finished = child.wait(timeout: 60)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(finished.status == 65, "\(finished.stderr)")
        #expect(finished.stderr == "lab class submit: 4 entries in \(outbox.path) are not this copy's submissions, left alone: "
                + "a-folder.json, fifo.json, garbage.json, …\n", "\(finished.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: outbox.path).count == 4)
    }
}
