import Foundation
import LabVocabulary

/// A run's exchanges against time, the way a browser's network panel draws them: a bar per
/// request from its start to its last chunk, the wait for the response's head paler, labelled
/// with what was asked and answered; under them, the bytes on disk. The article's run sits above
/// the corrected one's, on one time axis, so the defect shows as a different shape.
struct ExchangeChart {
    typealias Element = HTMLTree.Element
    typealias Timeline = ComparisonResults.ExchangeTimeline

    /// One variant's run.
    struct Lane {
        let title: String
        let timeline: Timeline
        let sizeBytes: Int64
    }

    let lanes: [Lane]

    /// The chart of `lesson`'s pictured case in `machine`'s results, article above corrected, and
    /// the first of its runs; nil when none was pictured.
    static func of(_ lesson: String, in machine: ComparisonResults) -> (ExchangeChart, ComparisonResults.Run)? {
        let runs = machine.runs.filter { $0.lesson == lesson && $0.exchangeTimeline != nil }.sorted { $0.variant.rawValue < $1.variant.rawValue }
        guard let first = runs.first else { return nil }
        return (ExchangeChart(lanes: runs.compactMap { run in
            run.exchangeTimeline.map { Lane(title: laneTitle(run), timeline: $0, sizeBytes: run.sizeBytes) }
        }), first)
    }

    /// "03 OutputStream append: ignore-range, 16 MiB (drop at 30%, then …)".
    static func caption(_ run: ComparisonResults.Run, title: String) -> String {
        "\(run.lesson.prefix(2)) \(title): \(run.scenario.rawValue), \(Units.bytes(run.sizeBytes)) (\(run.scenario.summary))"
    }

    /// "article: fails, as its defect says: right size, wrong bytes".
    private static func laneTitle(_ run: ComparisonResults.Run) -> String {
        let outcome = switch run.status {
        case .pass: "verified"
        case .refused: "refused, by design"
        default: run.expectedFailure ? "fails, as its defect says: \(run.cause ?? "")" : "FAILS: \(run.cause ?? "")"
        }
        return ChartFrame.shortened("\(run.variant.rawValue): \(outcome)", to: 110)
    }

    static let labelWidth = 420.0
    static let plotRight = ChartFrame.width - 16
    static let rowHeight = 30.0
    static let diskHeight = 64.0
    static let laneGap = 44.0

    /// Okabe and Ito's palette, which reads the same for the common kinds of colour blindness;
    /// every bar also says its status in words.
    enum Colour {
        static let partial = "#0072B2"  // 206: the rest of the file
        static let whole = "#E69F00"  // 200: the whole file from byte 0
        static let notModified = "#009E73"  // 304
        static let failed = "#D55E00"  // an error status, or a transfer that broke
        static let other = "#999999"  // HEAD, and anything else
        static let disk = "#CC79A7"
    }

    /// Seconds from the earliest origin to the last thing any lane saw.
    private var duration: Double {
        let ends = lanes.flatMap { lane in
            lane.timeline.exchanges.compactMap { $0.endedAt.map { $0 - lane.timeline.origin } } + lane.timeline.disk.map(\.t)
        }
        return max(ends.max() ?? 0, 0.001)
    }

    private func laneHeight(_ lane: Lane) -> Double {
        24 + Double(max(lane.timeline.exchanges.count, 1)) * Self.rowHeight + Self.diskHeight + 24
    }

    var height: Double { lanes.map(laneHeight).reduce(0, +) + Double(max(lanes.count - 1, 0)) * Self.laneGap + 40 }

    func draw(in svg: Element) {
        let time = Axis(lower: 0, upper: Tick.roundedUpSeconds(duration), start: Self.labelWidth, end: Self.plotRight, logarithmic: false)
        let bottom = height - 40
        // The grid first, so that bars and words lie over it.
        for tick in Tick.seconds(upTo: time.upper, atMost: 8) {
            let x = time.position(tick.value)
            svg.add("line", ["class": "grid", "x1": ChartFrame.coordinate(x), "y1": "0", "x2": ChartFrame.coordinate(x),
                             "y2": ChartFrame.coordinate(bottom)])
            svg.add("text", ["class": "tick", "x": ChartFrame.coordinate(x), "y": ChartFrame.coordinate(bottom + 16),
                             "text-anchor": "middle"], text: tick.label)
        }
        var top = 0.0
        for lane in lanes {
            draw(lane, top: top, time: time, in: svg)
            top += laneHeight(lane) + Self.laneGap
        }
    }

    private func draw(_ lane: Lane, top: Double, time: Axis, in svg: Element) {
        let group = svg.add("g", ["class": "lane", "data-lane": lane.title])
        group.add("text", ["class": "panel-title", "x": "4", "y": ChartFrame.coordinate(top + 16)], text: lane.title)
        let timeline = lane.timeline
        let script = (try? FaultScript(parsing: timeline.faults)) ?? .none
        var gets = 0
        for (row, exchange) in timeline.exchanges.enumerated() {
            if exchange.method == .get { gets += 1 }
            let y = top + 24 + Double(row) * Self.rowHeight
            let fault = exchange.method == .get ? script.faults(forAttempt: gets) : []
            let onDisk = diskEffect(of: exchange, next: timeline.exchanges.dropFirst(row + 1).first, in: timeline)
            drawBar(exchange, fault: fault, onDisk: onDisk, origin: timeline.origin, y: y, time: time, in: group)
        }
        let diskTop = top + 24 + Double(max(timeline.exchanges.count, 1)) * Self.rowHeight + 8
        drawDisk(timeline.disk, size: lane.sizeBytes, top: diskTop, time: time, in: group)
        drawEvents(timeline, from: top + 22, to: diskTop + Self.diskHeight, time: time, in: group)
    }

    /// A Resume, a second launch, the app suspended, a kill: a dashed line down the lane where it happened.
    private func drawEvents(_ timeline: Timeline, from top: Double, to bottom: Double, time: Axis, in group: Element) {
        var labelled: [Double] = []
        for event in timeline.events ?? [] {
            let position = time.position(event.at - timeline.origin)
            let x = ChartFrame.coordinate(position)
            // Words of events close together go one line lower each, not over each other.
            let level = Double(labelled.filter { abs($0 - position) < 110 }.count % 3)
            labelled.append(position)
            let mark = group.add("g", ["class": "event", "data-event": event.what])
            mark.add("line", ["class": "event-line", "x1": x, "y1": ChartFrame.coordinate(top), "x2": x, "y2": ChartFrame.coordinate(bottom)])
            mark.add("text", ["class": "event-label", "x": ChartFrame.coordinate(position + 3),
                              "y": ChartFrame.coordinate(top + 8 + level * 13)], text: event.what)
        }
    }

    private func drawBar(_ exchange: HTTPExchange, fault: [FaultScript.Fault], onDisk: String?, origin: Double, y: Double,
                         time: Axis, in group: Element) {
        let bar = group.add("g", ["class": "exchange", "data-method": exchange.method.rawValue,
                                  "data-status": exchange.status.map(String.init) ?? "none"])
        bar.add("text", ["class": "bar-label", "x": "4", "y": ChartFrame.coordinate(y + 17)],
                text: ChartFrame.shortened(Self.label(exchange, fault: fault), to: 58))
        guard let started = exchange.startedAt else { return }
        let start = time.position(started - origin)
        let head = time.position((exchange.firstByteAt ?? exchange.endedAt ?? started) - origin)
        let end = max(time.position((exchange.endedAt ?? started) - origin), start + 2)
        bar.add("rect", ["class": "wait", "x": ChartFrame.coordinate(start), "y": ChartFrame.coordinate(y + 6),
                         "width": ChartFrame.coordinate(max(head - start, 0)), "height": "14", "fill": "#d9d9de"])
        bar.add("rect", ["class": "body", "x": ChartFrame.coordinate(head), "y": ChartFrame.coordinate(y + 4),
                         "width": ChartFrame.coordinate(max(end - head, 2)), "height": "18", "fill": Self.colour(of: exchange)])
        var notes: [String] = []
        if exchange.error != nil { notes.append("✗ broke") }
        if let onDisk { notes.append(onDisk) }
        guard !notes.isEmpty else { return }
        // Right of the bar; else inside its end, where the bar is wide enough for the words; else
        // left of its start.
        let note = notes.joined(separator: " · ")
        let width = Double(note.count) * 7.5
        let (x, anchor, style): (Double, String, String) = if end + 6 + width <= ChartFrame.width {
            (end + 6, "start", "bar-note")
        } else if end - head >= width + 12 {
            (end - 6, "end", Self.colour(of: exchange) == Colour.partial || Self.colour(of: exchange) == Colour.failed
                ? "bar-note inside light" : "bar-note inside")
        } else {
            (start - 6, "end", "bar-note")
        }
        bar.add("text", ["class": style, "x": ChartFrame.coordinate(x), "y": ChartFrame.coordinate(y + 17), "text-anchor": anchor],
                text: note)
    }

    private func drawDisk(_ samples: [ComparisonResults.DiskSample], size: Int64, top: Double, time: Axis, in group: Element) {
        let most = max(Double(samples.map(\.bytes).max() ?? 0), Double(size))
        let bytes = Axis(lower: 0, upper: Tick.roundedUp(most), start: top + Self.diskHeight, end: top, logarithmic: false)
        group.add("rect", ["class": "plot", "x": ChartFrame.coordinate(Self.labelWidth), "y": ChartFrame.coordinate(top),
                           "width": ChartFrame.coordinate(Self.plotRight - Self.labelWidth), "height": ChartFrame.coordinate(Self.diskHeight)])
        group.add("text", ["class": "bar-label", "x": "4", "y": ChartFrame.coordinate(top + 16)], text: "bytes on disk")
        group.add("text", ["class": "tick", "x": "4", "y": ChartFrame.coordinate(top + 34)],
                  text: "the file is \(Units.bytes(Double(size))); at most \(Units.bytes(Double(samples.map(\.bytes).max() ?? 0)))")
        let full = bytes.position(Double(size))
        group.add("line", ["class": "baseline", "x1": ChartFrame.coordinate(Self.labelWidth), "y1": ChartFrame.coordinate(full),
                           "x2": ChartFrame.coordinate(Self.plotRight), "y2": ChartFrame.coordinate(full)])
        guard !samples.isEmpty else { return }
        let points = samples.map { "\(ChartFrame.coordinate(time.position($0.t))),\(ChartFrame.coordinate(bytes.position(Double($0.bytes))))" }
        group.add("polyline", ["class": "disk", "points": points.joined(separator: " "), "fill": "none", "stroke": Colour.disk,
                               "stroke-width": "2.5", "stroke-linejoin": "round"])
    }

    /// "GET 206 · bytes=5033165- · 11.2 MiB · drop at 30%".
    static func label(_ exchange: HTTPExchange, fault: [FaultScript.Fault]) -> String {
        var parts = ["\(exchange.method.rawValue) \(exchange.status.map(String.init) ?? "–")"]
        if let range = exchange.range { parts.append(range) }
        if exchange.ifNoneMatch != nil || exchange.ifModifiedSince != nil { parts.append("conditional") }
        if exchange.bodyBytes > 0 { parts.append(Units.bytes(Double(exchange.bodyBytes))) }
        // A throttle only paces the picture's run (or plays a slow link); the label names what breaks.
        let breaking = fault.filter { if case .throttle = $0 { false } else { true } }
        if !breaking.isEmpty { parts.append("fault: " + breaking.map(\.description).joined(separator: "+")) }
        return parts.joined(separator: " · ")
    }

    static func colour(of exchange: HTTPExchange) -> String {
        if exchange.error != nil { return Colour.failed }
        switch exchange.status {
        case 206?: return Colour.partial
        case 200? where exchange.method == .get || exchange.method == .post: return Colour.whole
        case 304?: return Colour.notModified
        case let status? where status >= 400: return Colour.failed
        default: return Colour.other
        }
    }

    /// What a body did to the file: continued what was there, or replaced it. Read from the
    /// bytes on disk just before the request and once it was over (at the next one's start).
    private func diskEffect(of exchange: HTTPExchange, next: HTTPExchange?, in timeline: Timeline) -> String? {
        guard exchange.bodyBytes > 0, let started = exchange.startedAt else { return nil }
        let before = timeline.disk.last { $0.t <= started - timeline.origin }?.bytes ?? 0
        let settled = next?.startedAt.map { time in timeline.disk.last { $0.t <= time - timeline.origin } } ?? timeline.disk.last
        guard before > 0, let after = settled?.bytes else { return nil }
        let slack = max(exchange.bodyBytes / 20, 64 << 10)
        // Where the body began is read from where it ended: the sample before the request may
        // trail the writes still queued.
        if after >= before + exchange.bodyBytes - slack { return "appended after \(Units.bytes(Double(after - exchange.bodyBytes)))" }
        if after <= exchange.bodyBytes + slack { return "written from byte 0" }
        return nil
    }
}
