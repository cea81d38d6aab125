import Foundation

/// Maps data values to SVG coordinates along one direction of a chart.
struct Axis {
    let lower: Double
    let upper: Double
    /// The coordinate of `lower`.
    let start: Double
    /// The coordinate of `upper`.
    let end: Double
    let logarithmic: Bool

    /// Values outside the axis are held at its ends, so nothing is drawn off the chart.
    func position(_ value: Double) -> Double {
        let fraction: Double
        if logarithmic {
            let (low, high) = (log2(lower), log2(upper))
            fraction = high > low ? (log2(max(value, lower)) - low) / (high - low) : 0.5
        } else {
            fraction = upper > lower ? (value - lower) / (upper - lower) : 0.5
        }
        return start + (end - start) * min(max(fraction, 0), 1)
    }

    func contains(_ value: Double) -> Bool { value >= lower && value <= upper }

    /// The powers of two around `values`, so that every value lies inside.
    static func powerOfTwoBounds(_ values: [Double]) -> (lower: Double, upper: Double) {
        let smallest = max(values.min() ?? 1, 1), largest = max(values.max() ?? 1, 1)
        let lower = exp2(floor(log2(smallest)))
        var upper = exp2(ceil(log2(largest)))
        if upper <= lower { upper = lower * 2 }
        return (lower, upper)
    }
}

/// A labelled mark along an axis.
struct Tick {
    let value: Double
    let label: String

    /// Powers of two inside the axis, every second or fourth one when there are many.
    static func powersOfTwo(_ axis: Axis, atMost count: Int, label: (Double) -> String) -> [Tick] {
        let (lowest, highest) = (Int(ceil(log2(axis.lower))), Int(floor(log2(axis.upper))))
        guard lowest <= highest else { return [] }
        var exponents = Array(lowest...highest)
        var step = 1
        while exponents.count > count * step { step *= 2 }
        exponents = exponents.filter { $0 % step == 0 }
        return exponents.map { exp2(Double($0)) }.map { Tick(value: $0, label: label($0)) }
    }

    /// Round steps (1, 2 or 5 of a binary unit, times a power of ten) from zero to `upper`.
    static func linear(upTo upper: Double, atMost count: Int, unitSuffix: String) -> [Tick] {
        let unit = Units.ByteUnit.fitting(upper)
        let scaledUpper = upper / unit.bytes
        let rough = scaledUpper / Double(max(count - 1, 1))
        let power = pow(10, floor(log10(max(rough, 1e-9))))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? 10 * power
        return stride(from: 0, through: scaledUpper + step * 1e-9, by: step).map { value in
            Tick(value: value * unit.bytes, label: value == 0 ? "0" : "\(Units.decimal(value)) \(unit.name)\(unitSuffix)")
        }
    }

    /// A round number of seconds at or a little above `seconds`, for the end of a time axis.
    static func roundedUpSeconds(_ seconds: Double) -> Double {
        let power = pow(10, floor(log10(max(seconds, 1e-3))))
        return ([1.0, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].first { $0 * power >= seconds } ?? 10) * power
    }

    /// Round steps of seconds (1, 2 or 5 times a power of ten) from zero to `upper`.
    static func seconds(upTo upper: Double, atMost count: Int) -> [Tick] {
        let rough = upper / Double(max(count - 1, 1))
        let power = pow(10, floor(log10(max(rough, 1e-6))))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? 10 * power
        return stride(from: 0, through: upper + step * 1e-9, by: step).map { value in
            Tick(value: value, label: value == 0 ? "0" : step < 1 ? String(format: "%.\(max(0, Int(-floor(log10(step)))))f s", value)
                                                                 : String(format: "%.0f s", value))
        }
    }

    /// A round number a little above `value` (1, 2 or 5 of a binary unit times a power of ten), for
    /// the end of a linear axis.
    static func roundedUp(_ value: Double) -> Double {
        let unit = Units.ByteUnit.fitting(value)
        let scaled = value / unit.bytes
        let power = pow(10, floor(log10(max(scaled, 1e-9))))
        let multiple = [1.0, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10].first { $0 * power >= scaled } ?? 10
        return multiple * power * unit.bytes
    }
}

/// How one lesson × variant looks in every chart: the lesson picks the colour, the variant the
/// line (article dashed, corrected solid), so the two variants of a lesson read as a pair.
struct SeriesLook {
    /// Distinct on white and in print; no two neighbours alike.
    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#17becf", "#8c564b",
                          "#e377c2", "#bcbd22", "#393b79"]
    static let articleDash = "7 4"

    let colour: String
    let dashed: Bool

    init(_ strategy: Strategy, in data: ReportData) {
        colour = Self.palette[data.colourIndex(strategy.lesson) % Self.palette.count]
        dashed = strategy.isArticle
    }

    init(colour: String, dashed: Bool) {
        self.colour = colour
        self.dashed = dashed
    }
}

/// A chart's drawing area and the pieces every chart shares: grid and axes.
struct ChartFrame {
    static let width = 960.0

    let left: Double
    let right: Double
    let top: Double
    let bottom: Double

    /// Horizontal grid lines with labels on the left.
    func drawYTicks(_ ticks: [Tick], _ axis: Axis, in svg: HTMLTree.Element) {
        for tick in ticks {
            let y = axis.position(tick.value)
            svg.add("line", ["class": "grid", "x1": Self.coordinate(left), "y1": Self.coordinate(y),
                             "x2": Self.coordinate(right), "y2": Self.coordinate(y)])
            svg.add("text", ["class": "tick", "x": Self.coordinate(left - 8), "y": Self.coordinate(y + 4),
                             "text-anchor": "end"], text: tick.label)
        }
    }

    /// Vertical grid lines with labels underneath; a label too close to the last one shown is
    /// left out rather than drawn over it.
    func drawXTicks(_ ticks: [Tick], _ axis: Axis, in svg: HTMLTree.Element, minimumGap: Double = 56) {
        var lastLabelled = -Double.infinity
        for tick in ticks {
            let x = axis.position(tick.value)
            svg.add("line", ["class": "grid", "x1": Self.coordinate(x), "y1": Self.coordinate(top),
                             "x2": Self.coordinate(x), "y2": Self.coordinate(bottom)])
            guard x - lastLabelled >= minimumGap else { continue }
            lastLabelled = x
            svg.add("text", ["class": "tick", "x": Self.coordinate(x), "y": Self.coordinate(bottom + 18),
                             "text-anchor": "middle"], text: tick.label)
        }
    }

    static func coordinate(_ value: Double) -> String { String(format: "%.1f", value) }

    static func shortened(_ text: String, to length: Int) -> String {
        text.count > length ? String(text.prefix(length - 1)) + "…" : text
    }
}

extension ChartFrame {
    /// The plot's border alone, for a panel whose axes are named once for all panels.
    func drawBorder(in svg: HTMLTree.Element) {
        svg.add("rect", ["class": "plot", "x": Self.coordinate(left), "y": Self.coordinate(top),
                         "width": Self.coordinate(right - left), "height": Self.coordinate(bottom - top)])
    }
}

/// Small multiples: a panel per lesson, three across, on the same scales, so that eighteen lines
/// never share one plot and each stays legible on a projector.
struct Panels {
    static let columns = 3
    static let panelWidth = ChartFrame.width / Double(columns)
    static let panelHeight = 196.0
    static let legendHeight = 58.0

    let count: Int

    var height: Double { Double((count + Self.columns - 1) / Self.columns) * Self.panelHeight }

    func frame(_ index: Int) -> ChartFrame {
        let left = Double(index % Self.columns) * Self.panelWidth, top = Double(index / Self.columns) * Self.panelHeight
        return ChartFrame(left: left + 64, right: left + Self.panelWidth - 14, top: top + 28, bottom: top + Self.panelHeight - 36)
    }

    /// "03 OutputStream append" above the panel.
    func drawTitle(_ title: String, lesson: String, frame: ChartFrame, in svg: HTMLTree.Element) {
        svg.add("text", ["class": "panel-title", "data-lesson": lesson, "x": ChartFrame.coordinate(frame.left),
                         "y": ChartFrame.coordinate(frame.top - 9)],
                text: ChartFrame.shortened("\(lesson.prefix(2)) \(title)", to: 34))
    }

    /// A line of the legend drawn with a style of the page's (`diagonal`, `baseline`).
    struct StyledEntry {
        let label: String
        let style: String
    }

    /// One row under the panels: how an article and a corrected line look, then `extra`, then
    /// what the x axis is when a title says.
    func drawLegend(in svg: HTMLTree.Element, extra: [StyledEntry], xTitle: String? = nil) {
        let y = height + 16
        let legend = svg.add("g", ["class": "legend"])
        var x = 64.0
        for (label, dashed) in [("article", true), ("corrected", false)] {
            legend.add("line", ["x1": ChartFrame.coordinate(x), "y1": ChartFrame.coordinate(y),
                                "x2": ChartFrame.coordinate(x + 30), "y2": ChartFrame.coordinate(y),
                                "stroke": "#444444", "stroke-width": "2.5",
                                "stroke-dasharray": dashed ? SeriesLook.articleDash : "none"])
            legend.add("text", ["class": "legend-text", "x": ChartFrame.coordinate(x + 38), "y": ChartFrame.coordinate(y + 4)],
                       text: label)
            x += 38 + Double(label.count) * 7.5 + 28
        }
        for entry in extra {
            legend.add("line", ["class": entry.style, "x1": ChartFrame.coordinate(x), "y1": ChartFrame.coordinate(y),
                                "x2": ChartFrame.coordinate(x + 30), "y2": ChartFrame.coordinate(y)])
            legend.add("text", ["class": "legend-text", "x": ChartFrame.coordinate(x + 38), "y": ChartFrame.coordinate(y + 4)],
                       text: entry.label)
            x += 38 + Double(entry.label.count) * 7.5 + 28
        }
        if let xTitle {
            svg.add("text", ["class": "axis-title", "x": ChartFrame.coordinate(ChartFrame.width / 2),
                             "y": ChartFrame.coordinate(y + 30), "text-anchor": "middle"], text: xTitle)
        }
    }
}
