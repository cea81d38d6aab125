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

/// A chart's drawing area and the pieces every chart shares: grid, axes, legend.
struct ChartFrame {
    static let width = 960.0
    static let legendRowHeight = 20.0
    static let legendColumns = 2
    /// Legend text beyond this is cut short; the tables hold the full names.
    static let legendCharacters = 58

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

    /// The plot's border and the two axis titles.
    func drawAxisTitles(x: String, y: String, in svg: HTMLTree.Element) {
        svg.add("rect", ["class": "plot", "x": Self.coordinate(left), "y": Self.coordinate(top),
                         "width": Self.coordinate(right - left), "height": Self.coordinate(bottom - top)])
        svg.add("text", ["class": "axis-title", "x": Self.coordinate((left + right) / 2),
                         "y": Self.coordinate(bottom + 40), "text-anchor": "middle"], text: x)
        let middle = (top + bottom) / 2
        svg.add("text", ["class": "axis-title", "x": "16", "y": Self.coordinate(middle), "text-anchor": "middle",
                         "transform": "rotate(-90 16 \(Self.coordinate(middle)))"], text: y)
    }

    struct LegendEntry {
        let label: String
        let look: SeriesLook
    }

    /// The legend in columns under the plot, where it covers no line; `markers` when the lines
    /// have them.
    func drawLegend(_ entries: [LegendEntry], markers: Bool, at y: Double, in svg: HTMLTree.Element) {
        let columnWidth = (Self.width - left) / Double(Self.legendColumns)
        let rows = (entries.count + Self.legendColumns - 1) / Self.legendColumns
        let legend = svg.add("g", ["class": "legend"])
        for (index, entry) in entries.enumerated() {
            // Column by column, so the order reads down like a list.
            let column = Double(index / max(rows, 1)), row = Double(index % max(rows, 1))
            let x = left + column * columnWidth, rowY = y + row * Self.legendRowHeight
            legend.add("line", ["x1": Self.coordinate(x), "y1": Self.coordinate(rowY),
                                "x2": Self.coordinate(x + 30), "y2": Self.coordinate(rowY),
                                "stroke": entry.look.colour, "stroke-width": "2.5",
                                "stroke-dasharray": entry.look.dashed ? SeriesLook.articleDash : "none"])
            if markers {
                legend.add("circle", ["cx": Self.coordinate(x + 15), "cy": Self.coordinate(rowY), "r": "3.5",
                                      "fill": entry.look.colour])
            }
            legend.add("text", ["class": "legend-text", "x": Self.coordinate(x + 38), "y": Self.coordinate(rowY + 4)],
                       text: Self.shortened(entry.label, to: Self.legendCharacters))
        }
    }

    /// The height of a legend of `count` entries.
    static func legendHeight(_ count: Int) -> Double {
        Double((count + legendColumns - 1) / legendColumns) * legendRowHeight
    }

    static func coordinate(_ value: Double) -> String { String(format: "%.1f", value) }

    static func shortened(_ text: String, to length: Int) -> String {
        text.count > length ? String(text.prefix(length - 1)) + "…" : text
    }
}
