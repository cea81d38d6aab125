import Foundation
import LabVocabulary

/// The measured part of a lesson page, written from a results file so that the numbers on the
/// page come from one run and can be refreshed with one command (`lab compare --update-pages`,
/// or `lab pages FILE` for a run already made). It sits between two marker lines; everything
/// else on the page is the author's.
public enum MeasuredSection {
    public static let begin = "<!-- measured:begin -->"
    public static let end = "<!-- measured:end -->"

    public enum Problem: Error, CustomStringConvertible {
        case noMarkers(page: String)
        case lessonNotMeasured(LessonID)

        public var description: String {
            switch self {
            case .noMarkers(let page): "\(page) has no \(begin) … \(end) lines"
            case .lessonNotMeasured(let lesson): "the results have no run of lesson \(lesson.rawValue)"
            }
        }
    }

    /// `page` with the text between its markers replaced by `section`.
    public static func replacing(in page: String, named name: String, with section: String) throws -> String {
        guard let start = page.range(of: begin + "\n"), let stop = page.range(of: "\n" + end, range: start.upperBound..<page.endIndex)
              ?? (page[start.upperBound...].hasPrefix(end) ? start.upperBound..<start.upperBound : nil)
        else { throw Problem.noMarkers(page: name) }
        let body = section.isEmpty || section.hasSuffix("\n") ? section : section + "\n"
        let tail = page[stop.lowerBound...].drop { $0 == "\n" }
        return String(page[..<start.upperBound]) + body + String(tail)
    }

    /// The section for `lesson`: where the figures come from, the fault matrix with the cause of
    /// each failure, and the clean runs.
    public static func markdown(for lesson: LessonID, from results: ComparisonResults) throws -> String {
        let runs = results.loopbackRuns.filter { $0.lesson == lesson.rawValue }
        guard !runs.isEmpty else { throw Problem.lessonNotMeasured(lesson) }
        let connections = lesson.fetchesInSegments ? Self.connections(results) : []
        return (provenance(results) + faultMatrix(runs, results) + picture(lesson, results) + cleanRuns(runs, results) + connections)
            .joined(separator: "\n")
    }

    /// Lesson 11 beside aria2c and curl over 1, 2, 4 and 8 paced connections, when the run compared them.
    private static func connections(_ results: ComparisonResults) -> [String] {
        guard let runs = results.connections, let first = runs.first else { return [] }
        var lines = ["Over 1, 2, 4 and 8 connections, one file of \(Units.bytes(first.sizeBytes)), each connection paced to "
                        + "\(Units.rate(Double(first.paceBytesPerSecond))) by the lab server or by nginx's `limit_rate` "
                        + "(throughput, and peak memory; curl on one connection only):", "",
                     "| program | server | 1 | 2 | 4 | 8 | peak memory |", "|---|---|---|---|---|---|---|"]
        for server in ConnectionsServer.allCases {
            for program in ConnectionsProgram.allCases {
                let mine = runs.filter { $0.program == program && $0.server == server }
                guard !mine.isEmpty else { continue }
                let cells = ComparisonResults.connectionCounts.map { count in
                    mine.first { $0.connections == count }.map { Units.rate($0.throughputBytesPerSecond) } ?? "–"
                }
                lines.append("| \(program.rawValue) | \(server.rawValue) | " + cells.joined(separator: " | ")
                             + " | \(Units.bytes(mine.map(\.peakRSSBytes).max() ?? 0)) |")
            }
        }
        if let said = ReportWriter.whereMoreStopsHelping(runs.filter { $0.server == .lab }) { lines += ["", "From the lab server: " + said] }
        return lines
    }

    /// The link to the picture `lab pages` writes beside the page (`ExchangePicture`), when the
    /// run pictured this lesson.
    private static func picture(_ lesson: LessonID, _ results: ComparisonResults) -> [String] {
        guard let (_, run) = ExchangeChart.of(lesson.rawValue, in: results) else { return [] }
        return [
            "Every exchange of the \(run.scenario.rawValue) run against time, article above corrected: a bar per request, "
                + "labelled with its status, `Range`, bytes and the fault it met, and the bytes on disk under them "
                + "([how to read it](../docs/compare-and-report.md#every-exchange-against-time)):",
            "",
            "![The exchanges of lesson \(lesson.number) under \(run.scenario.rawValue), article above corrected](\(ExchangePicture.folder)/\(ExchangePicture.fileName(lesson)))",
            "",
        ]
    }

    private static func provenance(_ results: ComparisonResults) -> [String] {
        let environment = results.environment
        let settings = results.settings
        let repetitions = settings.faultRunRepetitions == settings.repetitions
            ? (settings.repetitions == 1 ? "one run each" : "median of \(settings.repetitions) runs")
            : "median of \(settings.repetitions) clean runs; fault scenarios \(ComparisonResults.Settings.times(settings.faultRunRepetitions))"
        return [
            "Written by `lab compare` from its `\(results.settings.preset)` run of \(Units.date(environment.startedAt)) "
                + "(\(environment.buildConfiguration) build, \(environment.cores) cores, \(PageText.inline(environment.operatingSystem)); "
                + "\(repetitions)). "
                + "Refresh with `swift run lab compare --update-pages`.",
            "",
        ]
    }

    private static func faultMatrix(_ runs: [ComparisonResults.Run], _ results: ComparisonResults) -> [String] {
        let scenarios = Scenario.allCases.filter { scenario in runs.contains { $0.scenario == scenario } }
        let variants = Variant.allCases.filter { variant in runs.contains { $0.variant == variant } }
        var lines = [
            "Outcomes by scenario (\"clean\" at every size; the fault scenarios at "
                + "\(Units.bytes(results.settings.faultSize))):",
            "",
            "| variant | " + scenarios.map(\.rawValue).joined(separator: " | ") + " |",
            "|---|" + String(repeating: "---|", count: scenarios.count),
        ]
        var causes: [String] = []
        for variant in variants {
            let cells = scenarios.map { scenario in
                let cell = runs.filter { $0.variant == variant && $0.scenario == scenario }
                for run in cell where run.status != .pass {
                    causes.append("- \(variant.rawValue), \(scenario.rawValue), \(Units.bytes(run.sizeBytes)): "
                                  + PageText.inline(run.cause ?? run.status.rawValue)
                                  + (run.bytesDownloadedAgain > 0 ? "; \(Units.bytes(run.bytesDownloadedAgain)) downloaded again" : ""))
                }
                return outcome(of: cell)
            }
            lines.append("| \(variant.rawValue) | " + cells.joined(separator: " | ") + " |")
        }
        return lines + (causes.isEmpty ? [] : [""] + causes) + [""]
    }

    /// One cell: pass, or the worst status with "(expected)" when the catalogue expects it. A
    /// second launch that passed says whether it kept the file or downloaded it again.
    private static func outcome(of runs: [ComparisonResults.Run]) -> String {
        guard let failed = runs.first(where: { $0.status != .pass }) else {
            guard let run = runs.first else { return "–" }
            guard run.scenario == .relaunch else { return "pass" }
            return Verdict.startedOver(fetching: run.bytesDownloadedAgain, beyond: 0, of: run.sizeBytes)
                ? "pass, downloaded again" : "pass, kept"
        }
        return failed.status.rawValue + (runs.allSatisfy { $0.status == .pass || $0.expectedFailure } ? " (expected)" : "")
    }

    private static func cleanRuns(_ runs: [ComparisonResults.Run], _ results: ComparisonResults) -> [String] {
        let clean = runs.filter { $0.scenario == .clean }
            .sorted { ($0.sizeBytes, $0.variant.rawValue) < ($1.sizeBytes, $1.variant.rawValue) }
        guard !clean.isEmpty else { return [] }
        var lines = [
            "Clean runs (the transfer is the lesson's own clock; \"against the floor\" divides it by a bare "
                + "URLSession download, or by curl -F for an upload, run just before it):",
            "",
            "| size | variant | wall | transfer | throughput | peak RSS | against the floor |",
            "|---|---|---|---|---|---|---|",
        ]
        for run in clean {
            let cells = [
                Units.bytes(run.sizeBytes), run.variant.rawValue, Units.seconds(run.wallSeconds) + " s",
                run.transferSeconds.map { Units.seconds($0) + " s" } ?? "–", Units.rate(run.throughputBytesPerSecond),
                Units.bytes(run.peakRSSBytes), run.costRatio.map(Units.multiple) ?? "–",
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        if let curl = results.references.filter({ $0.kind == .curl }).max(by: { $0.sizeBytes < $1.sizeBytes }) {
            lines += ["", "curl fetched \(Units.bytes(curl.sizeBytes)) in the same run at \(Units.rate(curl.throughputBytesPerSecond))."]
        }
        return lines + [""]
    }
}
