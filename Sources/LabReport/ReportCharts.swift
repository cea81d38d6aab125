import Foundation
import LabVocabulary

/// The three charts, drawn as SVG elements in the same tree as the page. With several machines
/// each chart is repeated per machine on the same axes, so the machines compare at a glance and
/// no chart holds more lines than one machine's lessons.
extension ReportWriter {
    private static let plot = ChartFrame(left: 84, right: 940, top: 16, bottom: 316)

    /// The `svg` element of one chart, in a figure captioned with the machine when there are several.
    func chart(_ section: Element, kind: String, machine: ComparisonResults, height: Double) -> Element {
        let figure = section.add("figure", ["class": "chart"])
        if data.isMerged { figure.add("figcaption", ["class": "label"], text: machine.label) }
        return figure.add("svg", [
            "xmlns": "http://www.w3.org/2000/svg", "viewBox": "0 0 \(Int(ChartFrame.width)) \(Int(height.rounded(.up)))",
            "role": "img", "data-chart": kind, "data-machine": machine.label,
            "aria-label": "\(kind) chart for \(machine.label)",
        ])
    }

    func series(_ svg: Element, _ id: String, machine: ComparisonResults) -> Element {
        svg.add("g", ["class": "series", "data-series": id, "data-machine": machine.label])
    }

    private func legendLabel(_ strategy: Strategy) -> String {
        "\(strategy.lesson.prefix(2)) \(data.name(strategy))"
    }

    func polyline(_ group: Element, _ points: [(x: Double, y: Double)], _ look: SeriesLook) {
        group.add("polyline", [
            "points": points.map { "\(ChartFrame.coordinate($0.x)),\(ChartFrame.coordinate($0.y))" }.joined(separator: " "),
            "fill": "none", "stroke": look.colour, "stroke-width": "2.5", "stroke-linejoin": "round",
            "stroke-dasharray": look.dashed ? SeriesLook.articleDash : "none",
        ])
    }

    // MARK: Peak RSS against file size

    func writePeakRSSCharts(_ section: Element) {
        let measured = data.machines.flatMap(\.runs).filter { $0.scenario == Scenario.clean && $0.status != .refused }
        guard !measured.isEmpty else {
            section.add("p", ["class": "note"], text: "No clean runs in these results.")
            return
        }
        let baselines = data.machines.compactMap(data.runtimeBaseline)
        section.add("p", ["class": "note"], text: """
            Clean scenario, both axes logarithmic, a small chart per lesson on the same scales. A strategy that \
            streams to disk stays flat; one that holds the file in memory climbs along the grey \
            "memory = file size" line. Article dashed, corrected solid; a hollow marker is a run that failed \
            (refused runs are left out).
            """ + (baselines.isEmpty ? "" : """
             The dash-dot line is the runtime's own memory before the first byte (\(baselines.map(Units.bytes).joined(separator: ", "))): \
            Swift, Foundation and the lab's kit, the same under every strategy.
            """))
        let sizes = data.cleanSizes.map(Double.init)
        let (smallest, largest) = (sizes.first ?? 1, sizes.last ?? 1)
        let bounds = Axis.powerOfTwoBounds(measured.map { Double($0.peakRSSBytes) })

        for machine in data.machines {
            let lessons = lessonsWithCleanRuns(on: machine)
            guard !lessons.isEmpty else { continue }
            let panels = Panels(count: lessons.count)
            let svg = chart(section, kind: "peak-rss", machine: machine, height: panels.height + Panels.legendHeight)
            for (index, lesson) in lessons.enumerated() {
                let frame = panels.frame(index)
                // A margin on both sides, so the first and last markers sit clear of the frame.
                let x = Axis(lower: smallest / 1.6, upper: largest * 1.6, start: frame.left, end: frame.right, logarithmic: true)
                let y = Axis(lower: bounds.lower, upper: bounds.upper, start: frame.bottom, end: frame.top, logarithmic: true)
                panels.drawTitle(data.title(lesson), lesson: lesson, frame: frame, in: svg)
                frame.drawYTicks(Tick.powersOfTwo(y, atMost: 4, label: Units.bytes), y, in: svg)
                frame.drawXTicks(sizes.map { Tick(value: $0, label: Units.bytes($0)) }, x, in: svg, minimumGap: 44)
                frame.drawBorder(in: svg)
                drawFileSizeDiagonal(svg, x, y)
                if let baseline = data.runtimeBaseline(machine) { drawBaseline(svg, Double(baseline), frame, y) }
                for strategy in data.strategies where strategy.lesson == lesson {
                    let look = SeriesLook(strategy, in: data)
                    let runs = data.runs(machine, strategy, scenario: Scenario.clean).filter { $0.status != .refused }
                    guard !runs.isEmpty else { continue }
                    let group = series(svg, strategy.id, machine: machine)
                    let points = runs.map { (x: x.position(Double($0.sizeBytes)), y: y.position(Double($0.peakRSSBytes))) }
                    if points.count > 1 { polyline(group, points, look) }
                    for (run, point) in zip(runs, points) {
                        group.add("circle", ["cx": ChartFrame.coordinate(point.x), "cy": ChartFrame.coordinate(point.y),
                                             "r": "3.5", "stroke": look.colour, "stroke-width": "2",
                                             "fill": run.status == .pass ? look.colour : "white"])
                    }
                }
            }
            panels.drawLegend(in: svg, extra: [.init(label: "memory = file size", style: "diagonal"),
                                               .init(label: "the runtime before the first byte", style: "baseline")],
                              xTitle: "x: file size · y: peak RSS")
        }
    }

    /// The lessons with a clean run that was not refused, in order.
    private func lessonsWithCleanRuns(on machine: ComparisonResults) -> [String] {
        data.lessons.filter { lesson in
            data.strategies.contains { strategy in
                strategy.lesson == lesson && data.runs(machine, strategy, scenario: Scenario.clean).contains { $0.status != .refused }
            }
        }
    }

    /// Where memory equals the file: the line a strategy that holds the whole file rides along.
    private func drawFileSizeDiagonal(_ svg: Element, _ x: Axis, _ y: Axis) {
        let from = max(x.lower, y.lower), to = min(x.upper, y.upper)
        guard from < to else { return }
        svg.add("line", ["class": "diagonal",
                         "x1": ChartFrame.coordinate(x.position(from)), "y1": ChartFrame.coordinate(y.position(from)),
                         "x2": ChartFrame.coordinate(x.position(to)), "y2": ChartFrame.coordinate(y.position(to))])
    }

    /// The runtime's own memory, across the panel: what no strategy can go below.
    private func drawBaseline(_ svg: Element, _ bytes: Double, _ frame: ChartFrame, _ y: Axis) {
        guard y.contains(bytes) else { return }
        let position = ChartFrame.coordinate(y.position(bytes))
        svg.add("line", ["class": "baseline", "data-bytes": String(Int64(bytes)), "x1": ChartFrame.coordinate(frame.left),
                         "y1": position, "x2": ChartFrame.coordinate(frame.right), "y2": position])
    }

    // MARK: RSS over time

    func writeTimelineCharts(_ section: Element) {
        let timelines = data.machines.map { machine in
            (machine, data.strategies.compactMap { strategy -> (Strategy, [ComparisonResults.RSSSample])? in
                guard let size = data.largestCleanSize(machine),
                      let run = data.runs(machine, strategy, scenario: Scenario.clean).first(where: { $0.sizeBytes == size }),
                      run.status != .refused, let samples = run.rssTimeline, !samples.isEmpty else { return nil }
                return (strategy, samples.sorted { $0.t < $1.t })
            })
        }
        let samples = timelines.flatMap { $0.1.flatMap(\.1) }
        guard !samples.isEmpty else {
            section.add("p", ["class": "note"], text: "No RSS timeline in these results.")
            return
        }
        section.add("p", ["class": "note"], text: """
            Clean scenario at the largest size, a small chart per lesson on the same scale. The runs can differ \
            in length by a factor of thirty, so each line is stretched across the whole width: the x axis is \
            the share of that run's own duration, which the legend gives in seconds. A line that climbs from \
            left to right holds the file in memory.
            """)
        let top = Tick.roundedUp(Double(samples.map(\.rssBytes).max() ?? 1))
        let percentTicks = stride(from: 0.0, through: 1.0, by: 0.5).map { Tick(value: $0, label: "\(Int($0 * 100)) %") }

        for (machine, lines) in timelines where !lines.isEmpty {
            var lessons: [String] = []
            for (strategy, _) in lines where !lessons.contains(strategy.lesson) { lessons.append(strategy.lesson) }
            let panels = Panels(count: lessons.count)
            let svg = chart(section, kind: "rss-timeline", machine: machine, height: panels.height + Panels.legendHeight)
            for (index, lesson) in lessons.enumerated() {
                let frame = panels.frame(index)
                let x = Axis(lower: 0, upper: 1, start: frame.left, end: frame.right, logarithmic: false)
                let y = Axis(lower: 0, upper: top, start: frame.bottom, end: frame.top, logarithmic: false)
                let durations = lines.filter { $0.0.lesson == lesson }
                    .map { "\($0.0.variant.rawValue) \(Units.seconds($0.1.last?.t ?? 0)) s" }.joined(separator: ", ")
                panels.drawTitle("\(data.title(lesson)) (\(durations))", lesson: lesson, frame: frame, in: svg)
                frame.drawYTicks(Tick.linear(upTo: top, atMost: 4, unitSuffix: ""), y, in: svg)
                frame.drawXTicks(percentTicks, x, in: svg, minimumGap: 44)
                frame.drawBorder(in: svg)
                for (strategy, samples) in lines where strategy.lesson == lesson {
                    let duration = samples.last?.t ?? 0
                    let points = samples.map { sample in
                        (x: x.position(duration > 0 ? sample.t / duration : 0), y: y.position(Double(sample.rssBytes)))
                    }
                    let group = series(svg, strategy.id, machine: machine)
                    group.set("data-duration", String(duration))
                    polyline(group, points.count == 1 ? points + points : points, SeriesLook(strategy, in: data))
                }
            }
            let size = data.largestCleanSize(machine).map(Units.bytes) ?? ""
            panels.drawLegend(in: svg, extra: [], xTitle: "x: share of the run's duration (\(size) file) · y: RSS")
        }
    }

    // MARK: Throughput bars

    /// One bar of the throughput chart: a lesson × variant or another client.
    private struct Bar {
        let series: String
        let label: String
        let look: SeriesLook
        let status: ComparisonResults.RunStatus
        let expectedFailure: Bool
        let bytesPerSecond: Double
    }

    /// The other clients, in darker and lighter grey: no lesson uses grey.
    private static let referenceClients: [(kind: ReferenceKind, colour: String)] = [(.curl, "#444444"), (.wget, "#888888")]
    private static let limits: [ReferenceKind] = [.loopbackLimit, .diskLimit]
    /// A limit further out than this multiple of the fastest bar is named instead of drawn, so
    /// that it does not squeeze every bar into the left edge.
    private static let limitReach = 1.5

    func writeThroughputCharts(_ section: Element) {
        let charts = data.machines.compactMap { machine -> (machine: ComparisonResults, size: Int64, bars: [Bar])? in
            guard let size = data.largestCleanSize(machine) else { return nil }
            var bars = data.strategies.compactMap { strategy -> Bar? in
                guard let run = data.runs(machine, strategy, scenario: Scenario.clean).first(where: { $0.sizeBytes == size })
                else { return nil }
                return Bar(series: strategy.id, label: legendLabel(strategy), look: SeriesLook(strategy, in: data),
                           status: run.status, expectedFailure: run.expectedFailure,
                           bytesPerSecond: run.throughputBytesPerSecond)
            }
            for (kind, colour) in Self.referenceClients {
                guard let reference = data.reference(kind, of: machine, near: size) else { continue }
                let label = reference.sizeBytes == size ? kind.rawValue : "\(kind.rawValue) (\(Units.bytes(reference.sizeBytes)) file)"
                bars.append(Bar(series: kind.rawValue, label: label, look: SeriesLook(colour: colour, dashed: false),
                                status: .pass, expectedFailure: false, bytesPerSecond: reference.throughputBytesPerSecond))
            }
            return bars.isEmpty ? nil : (machine, size, bars)
        }
        guard !charts.isEmpty else {
            section.add("p", ["class": "note"], text: "No clean runs in these results.")
            return
        }
        section.add("p", ["class": "note"], text: """
            Clean scenario at the largest size, next to curl and wget on the same file. The vertical lines \
            are this machine's limits: reading from the server over loopback with nothing else to do, and \
            writing to its disk. A hollow bar is a run that failed: outlined in red when nobody \
            expected it to.
            """)
        let fewRuns = data.machines.filter { $0.settings.repetitions < Verdict.repetitionsForSpeed }
        if !fewRuns.isEmpty {
            section.add("p", ["class": "note few-runs"], text: """
                Not enough runs to tell which is faster: \(fewRuns.map(\.label).joined(separator: ", ")) ran each case \
                \(fewRuns.map(\.settings.repetitions).max() == 1 ? "once" : "fewer than \(Verdict.repetitionsForSpeed) times"), \
                and one run on a busy machine can be slower than another by more than the strategies differ. \
                Compare with --repetitions \(Verdict.repetitionsForSpeed) or more for speed.
                """)
        }
        // A refused run has no throughput worth drawing, whatever its record says.
        let fastest = charts.flatMap { $0.bars.filter { $0.status != .refused }.map(\.bytesPerSecond) }.max() ?? 1
        let limitValues = charts.flatMap { machine, size, _ in
            Self.limits.compactMap { data.reference($0, of: machine, near: size)?.throughputBytesPerSecond }
        }
        let reach = ([fastest] + limitValues.filter { $0 <= fastest * Self.limitReach }).max() ?? 1
        let upper = Tick.roundedUp(max(reach * 1.08, 1))
        for (machine, size, bars) in charts {
            let limits = Self.limits.compactMap { data.reference($0, of: machine, near: size) }.map { reference in
                Limit(id: reference.kind.rawValue, name: "\(reference.kind.rawValue.replacingOccurrences(of: "-", with: " ")) "
                      + Units.rate(reference.throughputBytesPerSecond), bytesPerSecond: reference.throughputBytesPerSecond)
            }
            drawThroughput(section, kind: "throughput", machine: machine, title: "throughput, \(Units.bytes(size)) file",
                           bars: bars, upper: upper, limits: limits)
        }
    }

    /// A vertical line across a throughput chart: a limit of this machine, or a link's bandwidth.
    private struct Limit {
        /// What `data-limit` says: "loopback-limit", "3g".
        let id: String
        let name: String
        let bytesPerSecond: Double
    }

    /// The corrected lessons' throughput over one network profile, the profile's bandwidth drawn
    /// as the limit it is.
    func writeNetworkThroughput(_ section: Element, machine: ComparisonResults, network: NetworkProfile, runs: [Run]) {
        let bars = runs.sorted { $0.lesson < $1.lesson }.map { run in
            let strategy = Strategy(lesson: run.lesson, variant: run.variant)
            return Bar(series: strategy.id, label: legendLabel(strategy), look: SeriesLook(strategy, in: data),
                       status: run.status, expectedFailure: run.expectedFailure, bytesPerSecond: run.throughputBytesPerSecond)
        }
        guard !bars.isEmpty else { return }
        let bandwidth = Double(network.bytesPerSecond)
        let upper = Tick.roundedUp(max(bandwidth, bars.map(\.bytesPerSecond).max() ?? 0) * 1.08)
        drawThroughput(section, kind: "network-throughput", machine: machine,
                       title: "throughput over \(network), \(Units.bytes(network.compareSize)) file", bars: bars, upper: upper,
                       limits: [Limit(id: network.rawValue, name: "\(network) bandwidth \(Units.rate(bandwidth))", bytesPerSecond: bandwidth)])
    }

    private func drawThroughput(_ section: Element, kind: String, machine: ComparisonResults, title: String, bars: [Bar],
                                upper: Double, limits: [Limit]) {
        let (labelRight, barsLeft, barsRight) = (330.0, 338.0, 860.0)
        let (rowHeight, barHeight) = (26.0, 18.0)
        let limits = limits.sorted { $0.bytesPerSecond < $1.bytesPerSecond }
        let barsTop = 16 + Double(limits.count) * 16 + 8
        let barsBottom = barsTop + Double(bars.count) * rowHeight
        let x = Axis(lower: 0, upper: upper, start: barsLeft, end: barsRight, logarithmic: false)
        let svg = chart(section, kind: kind, machine: machine, height: barsBottom + 48)
        let frame = ChartFrame(left: barsLeft, right: barsRight, top: barsTop - 4, bottom: barsBottom)
        frame.drawXTicks(Tick.linear(upTo: upper, atMost: 7, unitSuffix: "/s"), x, in: svg)
        svg.add("text", ["class": "axis-title", "x": ChartFrame.coordinate((barsLeft + barsRight) / 2),
                         "y": ChartFrame.coordinate(barsBottom + 38), "text-anchor": "middle"],
                text: title)

        for (index, bar) in bars.enumerated() {
            let top = barsTop + Double(index) * rowHeight + (rowHeight - barHeight) / 2
            let middle = top + barHeight / 2 + 4
            let group = series(svg, bar.series, machine: machine)
            group.add("text", ["class": "bar-label", "x": ChartFrame.coordinate(labelRight), "y": ChartFrame.coordinate(middle),
                               "text-anchor": "end"], text: ChartFrame.shortened(bar.label, to: 48))
            guard bar.status != .refused else {
                group.add("text", ["class": "bar-value", "x": ChartFrame.coordinate(barsLeft + 6),
                                   "y": ChartFrame.coordinate(middle)], text: "refused")
                continue
            }
            let end = x.position(bar.bytesPerSecond)
            group.add("rect", [
                "x": ChartFrame.coordinate(barsLeft), "y": ChartFrame.coordinate(top),
                "width": ChartFrame.coordinate(max(end - barsLeft, 1)), "height": ChartFrame.coordinate(barHeight),
                "fill": bar.status == .pass ? bar.look.colour : "white",
                "fill-opacity": bar.look.dashed ? "0.5" : "1",
                "stroke": bar.status == .pass ? bar.look.colour
                    : bar.expectedFailure ? ReportStyle.expectedFailureColour : ReportStyle.failureColour,
                "stroke-width": bar.status == .pass ? "1.5" : "2.5",
                "stroke-dasharray": bar.look.dashed ? "4 2" : "none",
            ])
            let failed = bar.status == .pass ? "" : bar.expectedFailure ? " (failed, expected)" : " (FAILED)"
            group.add("text", ["class": "bar-value", "x": ChartFrame.coordinate(end + 6), "y": ChartFrame.coordinate(middle)],
                      text: Units.rate(bar.bytesPerSecond) + failed)
        }
        drawLimits(svg, limits, x, rowsTop: 16, barsBottom: barsBottom)
    }

    /// The vertical lines for the limits, each label on its own row so that two close limits
    /// do not print over each other. A limit beyond the axis is named at its right end.
    private func drawLimits(_ svg: Element, _ limits: [Limit], _ x: Axis, rowsTop: Double, barsBottom: Double) {
        // Every line starts below the last row of labels, so no line runs through a label.
        let linesTop = rowsTop + Double(limits.count) * 16
        for (index, limit) in limits.enumerated() {
            let labelY = rowsTop + Double(index) * 16 + 10
            let name = limit.name
            let group = svg.add("g", ["class": "limit", "data-limit": limit.id])
            guard x.contains(limit.bytesPerSecond) else {
                group.add("text", ["x": ChartFrame.coordinate(x.end), "y": ChartFrame.coordinate(labelY), "text-anchor": "end"],
                          text: name + ", off the scale →")
                continue
            }
            let position = x.position(limit.bytesPerSecond)
            group.add("line", ["x1": ChartFrame.coordinate(position), "y1": ChartFrame.coordinate(linesTop),
                               "x2": ChartFrame.coordinate(position), "y2": ChartFrame.coordinate(barsBottom)])
            let anchorAtEnd = position > x.start + (x.end - x.start) * 0.6
            group.add("text", ["x": ChartFrame.coordinate(position + (anchorAtEnd ? -4 : 4)), "y": ChartFrame.coordinate(labelY),
                               "text-anchor": anchorAtEnd ? "end" : "start"], text: name)
        }
    }
}
