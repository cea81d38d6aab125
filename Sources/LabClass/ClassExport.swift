import Crypto
import Foundation
import LabReport
import LabVocabulary

/// A class's grades in the formats schools' tools read (docs/class.md says which reads which).
/// Each uses the grid's latest standing of every student on every check.
public enum ClassExportFormat: String, CaseIterable, Sendable {
    /// One file: a row per student, a column per check.
    case csv
    /// One file: a test suite per student, a test case per check.
    case junit
    /// A folder per student with Exercism's test-runner results.json, version 3.
    case exercism
    /// A folder per student with Gradescope's autograder results.json.
    case gradescope

    /// Whether the format is one file for the class, rather than one per student.
    public var isOneFile: Bool { self == .csv || self == .junit }
}

public enum ClassExport {
    // MARK: CSV (RFC 4180)

    public static func csv(_ grid: ClassGrid) -> String {
        let header = ["student"] + grid.columns.map { "\($0.number) \($0.check)" } + ["fixed"]
        var lines = [header.map(csvField).joined(separator: ",")]
        for student in grid.students {
            let standings = grid.columns.map { grid.standing(student, $0) }
            let fixed = standings.filter { $0 == .fixed }.count
            lines.append(([student] + standings.map(\.rawValue) + ["\(fixed) of \(grid.countedColumns.count)"]).map(csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// Quoted when it must be; a cell a spreadsheet would run as a formula (=, +, -, @ first, or
    /// their fullwidth forms, which some spreadsheets read as the same) gets a leading apostrophe,
    /// so a name cannot become one.
    static func csvField(_ value: String) -> String {
        var value = value
        if let first = value.unicodeScalars.first, "=+-@\t\r＝＋－＠".unicodeScalars.contains(first) { value = "'" + value }
        guard value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return value }
        return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: JUnit XML

    /// The Ant/Jenkins JUnit format (docs/class.md): fixed is a pass, still failing and not
    /// started a failure, does not compile an error, not run and a baseline skipped. A case's
    /// time is its check's, the suite's their sum.
    public static func junit(_ grid: ClassGrid, at date: Date = Date(), hostname: String = "localhost") -> String {
        let timestamp = ISO8601DateFormatter.string(from: date, timeZone: TimeZone(identifier: "UTC")!,
                                                    formatOptions: [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate])
        var xml = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>", "<testsuites>"]
        for (index, student) in grid.students.enumerated() {
            let standings = grid.columns.map { ($0, grid.standing(student, $0)) }
            let failures = standings.filter { $0.1 == .failing || $0.1 == .notStarted }.count
            let errors = standings.filter { $0.1 == .doesNotCompile }.count
            let skipped = standings.filter { $0.1 == .notRun || $0.1 == .baseline }.count
            let seconds = grid.columns.map { grid.cell(student, $0)?.seconds ?? 0 }
            xml.append("  <testsuite name=\"\(xmlText(student))\" package=\"download-lab\" id=\"\(index)\" timestamp=\"\(timestamp)\" "
                + "hostname=\"\(xmlText(hostname))\" tests=\"\(standings.count)\" failures=\"\(failures)\" errors=\"\(errors)\" "
                + "skipped=\"\(skipped)\" time=\"\(junitTime(seconds.reduce(0, +)))\">")
            xml.append("    <properties/>")
            for ((column, standing), time) in zip(standings, seconds) {
                let opening = "    <testcase name=\"\(xmlText(column.check))\" classname=\"exercise-\(xmlText(column.exercise))\" time=\"\(junitTime(time))\""
                let detail = xmlText(grid.cell(student, column)?.detail ?? standing.rawValue)
                switch standing {
                case .fixed:
                    xml.append(opening + "/>")
                case .failing, .notStarted:
                    xml.append(opening + ">")
                    xml.append("      <failure message=\"\(detail)\" type=\"\(xmlText(standing.rawValue))\">\(detail)</failure>")
                    xml.append("    </testcase>")
                case .doesNotCompile:
                    xml.append(opening + ">")
                    xml.append("      <error message=\"\(detail)\" type=\"does not compile\">\(detail)</error>")
                    xml.append("    </testcase>")
                case .notRun:
                    xml.append(opening + ">")
                    xml.append("      <skipped message=\"not run\"/>")
                    xml.append("    </testcase>")
                case .baseline:
                    xml.append(opening + ">")
                    xml.append("      <skipped message=\"\(xmlText(baselineLine(grid.cell(student, column))))\"/>")
                    xml.append("    </testcase>")
                }
            }
            xml.append("    <system-out/>")
            xml.append("    <system-err/>")
            xml.append("  </testsuite>")
        }
        xml.append("</testsuites>")
        return xml.joined(separator: "\n") + "\n"
    }

    /// Seconds with three decimals, as JUnit readers expect them.
    static func junitTime(_ seconds: Double) -> String { String(format: "%.3f", max(0, seconds)) }

    /// What a baseline check says in an export: it counts for nothing, and whether it held.
    static func baselineLine(_ cell: ClassGrid.Cell?) -> String {
        "baseline: the starting code passes it too, so it counts for nothing"
            + (cell.map { $0.status.isHeld ? "; it holds" : "; it fails now: \($0.detail)" } ?? "")
    }

    /// Escaped for an attribute or text; characters XML 1.0 does not allow become U+FFFD.
    static func xmlText(_ value: String) -> String {
        var escaped = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\t", "\n", "\r": escaped += "&#\(scalar.value);"
            case "\u{20}"..."\u{D7FF}", "\u{E000}"..."\u{FFFD}", "\u{10000}"..."\u{10FFFF}": escaped.unicodeScalars.append(scalar)
            default: escaped += "\u{FFFD}"
            }
        }
        return escaped
    }

    // MARK: Exercism test runner, version 3

    /// Optionals left nil are left out: JSONEncoder writes no key for them.
    struct ExercismResults: Encodable {
        let version = 3
        /// pass: every test passed; fail: one failed or errored; error: none ran.
        let status: String
        /// Only with status error.
        let message: String?
        let tests: [ExercismTest]?
    }

    struct ExercismTest: Encodable {
        let name: String
        let status: String
        /// With fail and error only.
        let message: String?
        /// The command that shows the check by hand.
        let test_code: String
        /// The exercise: task 1 is exercise 00.
        let task_id: Int
    }

    /// Exercism has no status for a test that does not count, so a baseline check is left out.
    public static func exercism(_ grid: ClassGrid, student: String) -> Data {
        let tests = grid.countedColumns.map { column -> ExercismTest in
            let standing = grid.standing(student, column)
            let detail = grid.cell(student, column)?.detail
            let (status, message): (String, String?) = switch standing {
            case .fixed: ("pass", nil)
            case .failing, .notStarted: ("fail", detail ?? standing.rawValue)
            case .doesNotCompile: ("error", detail ?? standing.rawValue)
            case .notRun, .baseline: ("error", "not run")
            }
            return ExercismTest(name: "\(column.number) \(column.check)", status: status, message: message,
                                test_code: "swift run lab exercise see \(column.number) \(column.check)",
                                task_id: (Int(column.number) ?? 0) + 1)
        }
        let results: ExercismResults
        if tests.allSatisfy({ $0.status == "error" }) {
            results = ExercismResults(status: "error", message: "no check ran: \(tests.first?.message ?? "nothing submitted")", tests: nil)
        } else {
            results = ExercismResults(status: tests.allSatisfy { $0.status == "pass" } ? "pass" : "fail", message: nil, tests: tests)
        }
        return encoded(results)
    }

    // MARK: Gradescope

    struct GradescopeResults: Encodable {
        let score: Double
        let output: String
        let tests: [GradescopeTest]
    }

    struct GradescopeTest: Encodable {
        let name: String
        let number: String
        let score: Double
        let max_score: Double
        let status: String
        let output: String
    }

    /// A point per check that holds of those the starting code fails; a baseline is listed, out of 0.
    public static func gradescope(_ grid: ClassGrid, student: String) -> Data {
        let tests = grid.columns.enumerated().map { index, column -> GradescopeTest in
            let standing = grid.standing(student, column)
            let cell = grid.cell(student, column)
            let detail = cell?.detail ?? ""
            let name = "Exercise \(column.number): \(column.check)", number = "\(Int(column.number) ?? 0).\(index + 1)"
            if standing == .baseline {
                return GradescopeTest(name: name + " (baseline)", number: number, score: 0, max_score: 0,
                                      status: cell?.status.isHeld == true ? "passed" : "failed", output: baselineLine(cell))
            }
            return GradescopeTest(name: name, number: number,
                                  score: standing == .fixed ? 1 : 0, max_score: 1, status: standing == .fixed ? "passed" : "failed",
                                  output: standing.rawValue + (detail.isEmpty ? "" : ": " + detail))
        }
        let score = tests.map(\.score).reduce(0, +)
        return encoded(GradescopeResults(score: score, output: "\(Int(score)) of \(grid.countedColumns.count) checks hold "
                                         + "of those the starting code fails (Download Lab)", tests: tests))
    }

    private static func encoded(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)) ?? Data()
    }

    /// A folder name for a student's files that stays inside the export folder whatever the
    /// name: its letters and digits, then the first 8 hex digits of its SHA-256, so two names
    /// that look alike still get two folders.
    public static func folderName(for student: String) -> String {
        let kept = student.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }
        let slug = String(String.UnicodeScalarView(kept.prefix(40)))
        let digest = SHA256.hash(data: Data(student.utf8)).prefix(4).map { String(format: "%02x", $0) }.joined()
        return (slug.isEmpty ? "student" : slug) + "-" + digest
    }
}
