import ArgumentParser
import Foundation
import LabHarness
import LabKit
import LabPlatform
import LabVocabulary

/// `lab doctor`: the pre-flight a teacher runs on one student's machine before the first class.
/// Every check is done for real, once; the table says what was found, and one line sums it up
/// for a message.
struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check that a class can run on this machine: one table, and one line to paste into a message.",
        discussion: """
            Run it in the package's folder after `swift build`. It checks the toolchain, the C headers, the lab's \
            programs, a loopback port, the lab's output folder, the free disk, the optional tools, what the tests \
            need (nginx, python3's jsonschema), one lesson run, lab compare's references and one lesson as it runs \
            them, and one exercise check. Exit status: 0 when a class can run here and the README's two commands \
            can pass; 1 when something stops them, with one line on stderr for each problem.
            """)

    @Option(help: "The loopback port to serve on (0 picks a free one): give the one your class will use.")
    var port = 0

    @OptionGroup var build: ExerciseBuildOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() throws {
        Console.output("lab doctor: can a class run on this machine?\n")
        let probes = DoctorProbes(port: port, ignoringLock: build.ignoringLock)
        let findings = probes.runAll()
        Console.output(Self.table(findings))
        Console.output("\nPaste this into your message:\n  " + Self.summary(findings, swift: probes.swiftVersion))
        let problems = findings.filter { $0.verdict == .problem }
        for problem in problems { Console.error("lab doctor: \(problem.check.title): \(problem.detail)") }
        if findings.contains(where: \.stopsAClass) { throw ExitCode.failure }
    }

    static func table(_ findings: [DoctorFinding]) -> String {
        let checkWidth = max(5, findings.map(\.check.title.count).max() ?? 0) + 2
        let verdictWidth = DoctorFinding.Verdict.notRun.rawValue.count + 2
        func row(_ columns: (String, String, String)) -> String {
            "  " + columns.0.padding(toLength: checkWidth, withPad: " ", startingAt: 0)
                + columns.1.padding(toLength: verdictWidth, withPad: " ", startingAt: 0) + columns.2
        }
        return ([row(("check", "result", "detail"))] + findings.map { row(($0.check.title, $0.verdict.rawValue, $0.detail)) })
            .joined(separator: "\n")
    }

    /// "lab doctor 0.9.0 · macOS 15.2.0 (arm64) · Swift 6.3.1 · a class can run here · without: wget".
    static func summary(_ findings: [DoctorFinding], swift version: String?) -> String {
        let toolchain = version.map { "Swift \($0)" } ?? "Swift: not found"
        let stopping = findings.filter(\.stopsAClass).map(\.check.title)
        let verdict = stopping.isEmpty ? "a class can run here"
            : "\(stopping.count) \(stopping.count == 1 ? "problem" : "problems"): " + stopping.joined(separator: ", ")
        let missing = findings.filter { $0.verdict == .missing }.map(\.check.title)
        return (["lab doctor \(LabVersion.current)", Platform.operatingSystem(), toolchain, verdict]
                + (missing.isEmpty ? [] : ["without: " + missing.joined(separator: ", ")]))
            .joined(separator: " · ")
    }
}
