import Foundation
import LabReport
import LabVocabulary
import Testing

/// `lab report FILE… -o PAGE`, run as a child process: the page is written, and every wrong
/// input ends with one line on stderr and its sysexits status.
struct LabReportCommandTests {
    static func results(label: String) -> ComparisonResults {
        let environment = ComparisonResults.Environment(
            hostname: "host-\(label)", cpuModel: "Test CPU", cores: 2, memoryBytes: 4 << 30,
            operatingSystem: "Linux", swiftVersion: "6.3.1", buildConfiguration: .release, serverKind: .embedded,
            serverURL: "http://127.0.0.1:1", startedAt: "2025-11-22T10:10:07Z", durationSeconds: 12.5)
        let settings = ComparisonResults.Settings(
            preset: .quick, sizes: [1 << 20], faultSize: 1 << 20, lessons: [LessonID.outputStream.rawValue], scenarios: [.clean],
            repetitions: 1, slowDiskWriteDelayMicroseconds: 200)
        let run = ComparisonResults.Run(
            lesson: LessonID.outputStream.rawValue, title: LessonID.outputStream.shortTitle, variant: .corrected, scenario: .clean,
            sizeBytes: 1 << 20, status: .pass, expectedFailure: false, cause: nil, wallSeconds: 0.05, cpuSeconds: 0.03,
            peakRSSBytes: 20 << 20, throughputBytesPerSecond: 20_971_520, bytesOnWire: 1 << 20, bytesDownloadedAgain: 0,
            repetitions: [], rssTimeline: [.init(t: 0, rssBytes: 10 << 20), .init(t: 0.05, rssBytes: 20 << 20)])
        return ComparisonResults(label: label, environment: environment, settings: settings, references: [], runs: [run])
    }

    static func writeResults(label: String, in folder: URL) throws -> String {
        let file = folder.appendingPathComponent("\(label).json")
        try results(label: label).write(to: file)
        return file.path
    }

    static func report(_ arguments: [String]) throws -> ChildProcess.Finished {
        try ChildProcess.run("lab", ["report"] + arguments, timeout: 60)
    }

    /// `lab pages` reads a results file as `lab report` does: one line and exit 65 for a file that
    /// is not one, and for one whose runs match no page; 66 for one that cannot be read.
    @Test func pagesRefusesWhatReportRefusesWithTheSameStatus() throws {
        let folder = try scratchDirectory()
        let truncated = folder.appendingPathComponent("cut.json")
        try Data(#"{"schema": "download-lab.results/1", "lab"#.utf8).write(to: truncated)
        // A run of a lesson no page has (the record names lessons by their ids).
        var other = Self.results(label: "other")
        other.runs = other.runs.map { run in var run = run; run.lesson = "99-none"; return run }
        let unmatched = folder.appendingPathComponent("unmatched.json")
        try other.write(to: unmatched)
        for (file, status, line) in [(truncated.path, 65, "\(truncated.path): not JSON: it is cut short, or not a results file"),
                                     (unmatched.path, 65, "\(unmatched.path) has no run of a lesson against the lab's own server: no page to write"),
                                     ("/nonexistent/r.json", 66, "/nonexistent/r.json: cannot read it")] {
            for command in ["pages", "report"] where command == "pages" || status == 66 || file == truncated.path {
                let finished = try ChildProcess.run("lab", [command, file, command == "pages" ? "--lessons" : "-o", folder.path + "/x"])
                #expect(finished.status == Int32(status), "\(command): \(finished.stderr)")
                #expect(finished.stderr == "lab \(command): \(line)\n")
            }
        }
    }

    @Test func writesOnePageWithEveryMachineAndPrintsItsPath() throws {
        let folder = try scratchDirectory()
        let first = try Self.writeResults(label: "lab-linux", in: folder)
        let second = try Self.writeResults(label: "same-name", in: folder)
        let page = folder.appendingPathComponent("pages/compare.html")
        let finished = try Self.report([first, second, "--label", "lab-linux", "--label", "laptop", "-o", page.path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stderr.isEmpty)
        #expect(finished.stdout == page.path + "\n")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("data-machine=\"lab-linux\""))
        #expect(html.contains("data-machine=\"laptop\""))
        #expect(!html.contains("data-machine=\"same-name\""))
        #expect(html.contains("host-same-name"))
    }

    @Test func refusesAWrongNumberOfLabels() throws {
        let folder = try scratchDirectory()
        let first = try Self.writeResults(label: "a", in: folder)
        let second = try Self.writeResults(label: "b", in: folder)
        let finished = try Self.report([first, second, "--label", "only-one", "-o", folder.appendingPathComponent("r.html").path])
        #expect(finished.status == 64)
        #expect(finished.stderr == "lab report: give one --label per results file, or none: 2 files, 1 label\n")
        #expect(finished.stdout.isEmpty)
    }

    @Test func refusesTwoMachinesWithTheSameLabel() throws {
        let folder = try scratchDirectory()
        let file = try Self.writeResults(label: "lab-linux", in: folder)
        let finished = try Self.report([file, file, "-o", folder.appendingPathComponent("r.html").path])
        #expect(finished.status == 64)
        #expect(finished.stderr == "lab report: two results files are labelled \"lab-linux\": name each machine with --label\n")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("r.html").path))
    }

    @Test func aMissingFileIsNoInput() throws {
        let folder = try scratchDirectory()
        let missing = folder.appendingPathComponent("missing.json").path
        let finished = try Self.report([missing, "-o", folder.appendingPathComponent("r.html").path])
        #expect(finished.status == 66)
        #expect(finished.stderr == "lab report: \(missing): cannot read it\n")
    }

    /// A device or a FIFO is not a results file, and is never read: /dev/zero would never end.
    @Test func aFileThatIsNotRegularIsNoInput() throws {
        let folder = try scratchDirectory()
        let finished = try Self.report(["/dev/zero", "-o", folder.appendingPathComponent("r.html").path])
        #expect(finished.status == 66)
        #expect(finished.stderr == "lab report: /dev/zero: not a regular file\n")
    }

    @Test(arguments: ["", "   "])
    func refusesABlankLabel(label: String) throws {
        let folder = try scratchDirectory()
        let file = try Self.writeResults(label: "a", in: folder)
        let finished = try Self.report([file, "--label", label, "-o", folder.appendingPathComponent("r.html").path])
        #expect(finished.status == 64)
        #expect(finished.stderr == "lab report: --label cannot be empty: it names the machine in the report\n")
    }

    @Test func aFileThatIsNotResultsIsBadData() throws {
        let folder = try scratchDirectory()
        let file = folder.appendingPathComponent("lesson.json")
        try Data(#"{"schema": "download-lab.lesson-result/1"}"#.utf8).write(to: file)
        let finished = try Self.report([file.path, "-o", folder.appendingPathComponent("r.html").path])
        #expect(finished.status == 65)
        #expect(finished.stderr == "lab report: \(file.path): schema is \"download-lab.lesson-result/1\", expected \"download-lab.results/1\"\n")
    }

    /// The page is written by renaming a new file over the path: over a link, a FIFO or a device
    /// that would replace it (run as root, `-o /dev/null` would replace the system's /dev/null).
    @Test(arguments: ["fifo", "symlink", "folder"])
    func refusesToReplaceAnythingButARegularFile(kind: String) throws {
        let folder = try scratchDirectory()
        let file = try Self.writeResults(label: "a", in: folder)
        let target = folder.appendingPathComponent("target")
        let victim = folder.appendingPathComponent("victim.txt")
        try Data("keep me".utf8).write(to: victim)
        switch kind {
        case "fifo": #expect(mkfifo(target.path, 0o600) == 0)
        case "symlink": try FileManager.default.createSymbolicLink(at: target, withDestinationURL: victim)
        default: try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        }
        let finished = try Self.report([file, "-o", target.path])
        let what = ["fifo": "a FIFO", "symlink": "a symbolic link", "folder": "a folder"][kind]!
        #expect(finished.status == 73, "\(finished.stderr)")
        #expect(finished.stderr == "lab report: \(target.path): it is \(what); only a new path or a regular file is written\n")
        #expect(finished.stdout.isEmpty)
        // Still what it was: lstat, as the link must not be followed.
        var status = stat()
        #expect(lstat(target.path, &status) == 0)
        #expect(status.st_mode & S_IFMT == ["fifo": S_IFIFO, "symlink": S_IFLNK, "folder": S_IFDIR][kind]!)
        #expect(try String(contentsOf: victim, encoding: .utf8) == "keep me")
    }

    /// A device node of the test's own, never the system's: against a lab that replaced what was
    /// at the path, `-o /dev/null` run as root would replace the machine's /dev/null. Making one
    /// takes root, as replacing one does.
    @Test(.enabled(if: getuid() == 0, "making a device node takes root"))
    func aDeviceIsNeverReplaced() throws {
        let folder = try scratchDirectory()
        let file = try Self.writeResults(label: "a", in: folder)
        let device = folder.appendingPathComponent("null")
        // The same device as /dev/null: major 1, minor 3.
        #expect(mknod(device.path, S_IFCHR | 0o666, (1 << 8) | 3) == 0)
        let finished = try Self.report([file, "-o", device.path])
        #expect(finished.status == 73)
        #expect(finished.stderr == "lab report: \(device.path): it is a device; only a new path or a regular file is written\n")
        var status = stat()
        #expect(lstat(device.path, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFCHR)
    }

    /// Link targets are folders or http(s) URLs: never a `javascript:` link in a page without script.
    @Test(arguments: ["javascript://%0Aalert(1)", "data://text/html,x", "file:///etc"])
    func refusesALessonsLinkThatIsNotAFolderOrAWebAddress(lessons: String) throws {
        let folder = try scratchDirectory()
        let file = try Self.writeResults(label: "a", in: folder)
        let page = folder.appendingPathComponent("r.html")
        let finished = try Self.report([file, "--lessons", lessons, "-o", page.path])
        #expect(finished.status == 64)
        #expect(finished.stderr == "lab report: --lessons must be a folder or an http:// or https:// URL, got \"\(lessons)\"\n")
        #expect(!FileManager.default.fileExists(atPath: page.path))
    }

    /// A folder whose name looks like a scheme is linked as a folder, not as that scheme.
    @Test func aFolderNamedLikeASchemeStaysAFolder() throws {
        let folder = try scratchDirectory()
        let file = try Self.writeResults(label: "a", in: folder)
        let page = folder.appendingPathComponent("r.html")
        let finished = try Self.report([file, "--lessons", folder.appendingPathComponent("javascript:alert(1)").path, "-o", page.path])
        #expect(finished.status == 0, "\(finished.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(!html.contains("href=\"javascript:"), "\(html.prefix(2000))")
        #expect(html.contains("href=\"./javascript:alert(1)/"))
    }

    @Test func aLabelLongerThanAnyNameIsRefused() throws {
        let folder = try scratchDirectory()
        let file = folder.appendingPathComponent("long.json").path
        try Self.results(label: String(repeating: "x", count: 2_000_000)).write(to: URL(fileURLWithPath: file))
        let started = Date()
        let finished = try Self.report([file, "-o", folder.appendingPathComponent("r.html").path])
        #expect(finished.status == 65)
        #expect(finished.stderr == "lab report: \(file): its label has 2000000 characters; at most 200\n")
        #expect(Date().timeIntervalSince(started) < 10)
        let long = try Self.report([file, "--label", String(repeating: "y", count: 201), "-o", folder.appendingPathComponent("r.html").path])
        #expect(long.status == 64)
        #expect(long.stderr == "lab report: --label has 201 characters; at most 200\n")
    }
}
