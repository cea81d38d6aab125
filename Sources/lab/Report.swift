/// `lab report RESULTS.json… -o report.html`: one HTML page from what `lab compare` measured.
///
/// The page stands alone (no script, nothing loaded from the network) and prints well: verdicts
/// per lesson, the fault matrix, charts of memory and throughput, every number in tables, and
/// the machines the numbers come from. Give several results files to put several machines side
/// by side, e.g. a student's laptop next to the lab machine:
///
///     lab report mine/results.json lab/results.json --label laptop --label lab -o compare.html
///
/// Links to the lesson pages point at `--lessons`, or at the `Lessons` folder of the current
/// directory when there is one; without either the page names are shown as text.
///
/// Exit status: 0 with the page's absolute path on stdout; 64 (EX_USAGE) for a wrong number of
/// `--label`s or two machines with the same label; 66 (EX_NOINPUT) when a file cannot be read;
/// 65 (EX_DATAERR) when it is not a results file; 73 (EX_CANTCREAT) when the page cannot be
/// written. One line on stderr in every failure case.

import ArgumentParser
import Foundation
import LabVocabulary
import LabHarness
import LabKit
import LabReport

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw one HTML page from the results.json files of lab compare.",
        discussion: """
            Give one file per machine; --label names each machine in the order of the files \
            (by default the label inside the file).
            """
    )

    @Argument(help: "Results files written by lab compare, one per machine.")
    var files: [String]

    @Option(name: .shortAndLong, help: "Where to write the page.")
    var output = "report.html"

    @Option(name: .customLong("label"), help: "A name for the machine of each file, in the order of the files.")
    var labels: [String] = []

    @Option(help: ArgumentHelp(
        "The folder of lesson pages to link to, or a URL (default: ./Lessons when there is one).",
        valueName: "path"))
    var lessons: String?

    /// sysexits.h
    static let noInput: Int32 = 66
    static let dataError: Int32 = 65
    static let cannotCreate: Int32 = 73

    func validate() throws {
        try labels.forEach(Self.checkLabel)
        try lessons.map(LessonPages.check)
        guard labels.isEmpty || labels.count == files.count else {
            throw ValidationError("give one --label per results file, or none: \(Self.count(files.count, "file")), \(Self.count(labels.count, "label"))")
        }
    }

    func run() throws {
        var results: [ComparisonResults] = []
        for (index, file) in files.enumerated() {
            var machine = read(file)
            if !labels.isEmpty { machine.label = labels[index] }
            results.append(machine)
        }
        var seen = Set<String>()
        for machine in results where !seen.insert(machine.label).inserted {
            // A label comes from a file and may hold anything; the message stays one line.
            throw ValidationError("two results files are labelled \"\(machine.label)\": name each machine with --label")
        }

        let page = URL(fileURLWithPath: output).standardizedFileURL
        let html = HTMLReport(results: results, lessonPagesPath: LessonPages.linkPrefix(lessons, pageFolder: page.deletingLastPathComponent()))
        do {
            try OutputFile.checkReplaceable(page)
        } catch {
            fail("\(error)", status: Self.cannotCreate)
        }
        do {
            try FileManager.default.createDirectory(at: page.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(html.render().utf8).write(to: page, options: .atomic)
        } catch {
            fail("\(page.path): cannot write it", status: Self.cannotCreate)
        }
        FileHandle.standardOutput.write(Data((page.path + "\n").utf8))
    }

    private func read(_ file: String) -> ComparisonResults { Self.read(file, command: "lab report") }

    /// The results file at `file`, or one line on stderr and exit 66 (it cannot be read) or 65
    /// (it is not a results file): `lab report` and `lab pages` read alike.
    static func read(_ file: String, command: String) -> ComparisonResults {
        do {
            return try ComparisonResults.read(from: URL(fileURLWithPath: file))
        } catch {
            let unreadable = (error as? ResultsFileError)?.isUnreadable ?? true
            fail("\(error)", status: unreadable ? Self.noInput : Self.dataError, command: command)
        }
    }

    /// A label names a machine in every table and legend: a blank one would name nothing.
    static func checkLabel(_ label: String) throws {
        guard !label.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw ValidationError("--label cannot be empty: it names the machine in the report")
        }
        guard label.count <= ComparisonResults.longestLabel else {
            throw ValidationError("--label has \(label.count) characters; at most \(ComparisonResults.longestLabel)")
        }
    }

    /// "1 file", "2 labels".
    private static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }

    /// One line on stderr, then the exit status; no usage, no stack trace.
    private func fail(_ message: String, status: Int32) -> Never { Self.fail(message, status: status, command: "lab report") }

    static func fail(_ message: String, status: Int32, command: String) -> Never {
        Console.error("\(command): \(message)")
        exit(withError: ExitCode(status))
    }
}
