import Foundation
import LabVocabulary

/// A lesson's picture of its exchanges as an SVG file of its own, for its page: the chart the
/// report draws, with a caption and its style inside, so that it renders wherever the page is
/// read (a repository's web view shows an `.svg` beside a `.md`).
public enum ExchangePicture {
    /// The folder beside the pages, and the file's name in it: `pictures/03-outputstream.svg`.
    public static let folder = "pictures"
    public static func fileName(_ lesson: LessonID) -> String { "\(lesson.rawValue).svg" }

    /// The SVG of `lesson`'s pictured run in `results`; nil when these results picture none.
    public static func svg(for lesson: LessonID, from results: ComparisonResults) -> String? {
        guard let (chart, first) = ExchangeChart.of(lesson.rawValue, in: results) else { return nil }
        return svg(chart, caption: ExchangeChart.caption(first, title: lesson.shortTitle), lesson: lesson.rawValue)
    }

    /// Runs side by side on one time axis, top first: `lab exercise see`'s student above the
    /// corrected variant. Each lane is a title, the run's exchanges and the file's size.
    public static func svg(caption: String, lanes: [(title: String, timeline: ComparisonResults.ExchangeTimeline, sizeBytes: Int64)],
                           lesson: LessonID) -> String {
        let chart = ExchangeChart(lanes: lanes.map { ExchangeChart.Lane(title: $0.title, timeline: $0.timeline, sizeBytes: $0.sizeBytes) })
        return svg(chart, caption: caption, lesson: lesson.rawValue)
    }

    private static func svg(_ chart: ExchangeChart, caption: String, lesson: String) -> String {
        let captionHeight = 30.0
        let tree = HTMLTree(svgWidth: ChartFrame.width, height: chart.height + captionHeight)
        tree.root.set("role", "img")
        tree.root.set("aria-label", "exchanges of lesson \(lesson) against time")
        tree.root.add("style", text: style)
        tree.root.add("rect", ["width": "100%", "height": "100%", "fill": "#fff"])
        tree.root.add("text", ["class": "caption", "x": "4", "y": "18"], text: caption)
        chart.draw(in: tree.root.add("g", ["transform": "translate(0 \(Int(captionHeight)))"]))
        return tree.serialized()
    }

    /// The report's stylesheet rules for the classes the chart uses, the report's own lines with
    /// their `svg ` scope taken off: the picture looks as the report does.
    static let style = rules(scope: "")

    /// The same rules, each under `scope` (e.g. "svg.run-picture "), for a page of other styles.
    static func rules(scope: String) -> String {
        let classes = [".grid", ".plot", ".panel-title", ".baseline", ".tick", ".bar-label", ".bar-note", ".event-line", ".event-label"]
        let rules = ReportStyle.css.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { line in line.hasPrefix("svg .") && classes.contains { line.contains("svg \($0)") } }
            .map { $0.replacingOccurrences(of: "svg .", with: scope + ".") }
        return ([scope + "text { font-family: -apple-system, BlinkMacSystemFont, \"Segoe UI\", Roboto, \"Helvetica Neue\", Arial, sans-serif; }",
                 scope + ".caption { font-size: 14px; fill: #1d1d1f; }"] + rules).joined(separator: "\n")
    }
}
