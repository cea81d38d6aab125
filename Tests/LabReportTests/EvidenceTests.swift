import Foundation
import LabReport
import LabVocabulary
import Testing

/// A verdict needs the evidence to carry it: sizes far enough apart for memory, repetitions for
/// speed. Below that the report says it cannot tell, and the runtime's own memory is named.
struct EvidenceTests {
    typealias Fixture = ReportFixture
    static let mebibyte = Fixture.mebibyte

    /// A `--quick` comparison: 1 MiB and 32 MiB, one repetition. Lesson 02's article rose by
    /// 3.4 MiB, which is noise; lesson 01's held the file and rose by 62 MiB.
    static func quick() -> ComparisonResults {
        var results = Fixture.results(label: "quick")
        results.settings.repetitions = 1
        results.settings.sizes = [mebibyte, 32 * mebibyte]
        results.runs = [
            Fixture.run("02-filehandle", "FileHandle seek and append", .article, .clean, mebibyte, peak: 41_000_000),
            Fixture.run("02-filehandle", "FileHandle seek and append", .article, .clean, 32 * mebibyte, peak: 44_600_000),
            Fixture.run("01-in-memory", "Every chunk in one buffer", .article, .clean, mebibyte, peak: 42_000_000),
            Fixture.run("01-in-memory", "Every chunk in one buffer", .article, .clean, 32 * mebibyte,
                        peak: 42_000_000 + 2 * 31 * mebibyte),
        ]
        results.references = results.references.map { reference in
            var reference = reference
            reference.sizeBytes = 32 * mebibyte
            return reference
        }
        return results
    }

    private static func verdict(_ page: ParsedPage, _ lesson: String) throws -> String {
        let item = try #require(page.root.all("li").first { $0["data-lesson"] == lesson && $0["data-variant"] == "article" })
        return item.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func sizesTooCloseAndOneRunSayNotEnoughRunsToTell() throws {
        let page = try ParsedPage(HTMLReport(results: [Self.quick()], lessonPagesPath: nil).render())
        #expect(try Self.verdict(page, "02-filehandle") == "FileHandle seek and append, article: memory: not enough runs to tell "
            + "(1 MiB and 32 MiB are too close), peak 42.5 MiB at 32 MiB, speed: not enough runs to tell")
        #expect(try Self.verdict(page, "01-in-memory") == "Every chunk in one buffer, article: grows with the file: 2.0× its size, "
            + "102 MiB at 32 MiB, speed: not enough runs to tell")
        let note = try #require(page.root.all("p").first { $0.hasClass("few-runs") })
        #expect(note.text.hasPrefix("Not enough runs to tell which is faster: quick ran each case once"))
    }

    @Test func enoughRunsAndSizesGiveTheVerdict() throws {
        let page = try ParsedPage(HTMLReport(results: [Fixture.results()], lessonPagesPath: nil).render())
        #expect(try Self.verdict(page, "03-outputstream").hasPrefix("OutputStream append, article: flat 22 MiB at 256 MiB, 0.40× curl"))
        #expect(page.root.all("p").allSatisfy { !$0.hasClass("few-runs") })
    }

    /// A small chart per lesson, each with the runtime's baseline: the lightest passing process
    /// of the smallest size.
    @Test func memoryChartsAreAPanelPerLessonWithTheRuntimeBaseline() throws {
        let page = try ParsedPage(HTMLReport(results: [Fixture.results()], lessonPagesPath: nil).render())
        for chart in ["peak-rss", "rss-timeline"] {
            let svg = try #require(page.root.all("svg", "data-chart", chart).first)
            let titles = svg.all("text").filter { $0.hasClass("panel-title") }
            let lessons = chart == "peak-rss" ? ["00-small-file", "01-in-memory", "03-outputstream"] : ["01-in-memory", "03-outputstream"]
            #expect(titles.compactMap { $0["data-lesson"] } == lessons, "\(chart)")
        }
        let peak = try #require(page.root.all("svg", "data-chart", "peak-rss").first)
        let baselines = peak.all("line").filter { $0.hasClass("baseline") && $0["data-bytes"] != nil }
        let lightest = Fixture.allRuns.filter { $0.scenario == .clean && $0.sizeBytes == Self.mebibyte && $0.status == .pass }.map(\.peakRSSBytes).min()!
        #expect(baselines.count == 3)
        #expect(baselines.allSatisfy { $0["data-bytes"] == String(lightest) })
        let note = try #require(page.root.all("section", "id", "memory").first?.all("p").first)
        #expect(lightest == 18 * Self.mebibyte)
        #expect(note.text.contains("The dash-dot line is the runtime's own memory before the first byte (18 MiB): "))
    }
}
