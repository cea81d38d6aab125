import LabVocabulary

/// "Several connections at once": lesson 11 beside aria2c and curl, one file over 1, 2, 4 and 8
/// connections, each connection paced by the server. A line per program against the number of
/// connections, the pace times that number as the line none can pass, and the table of figures.
extension ReportWriter {
    private static let connectionsPlot = ChartFrame(left: 84, right: 700, top: 16, bottom: 296)

    func writeConnections(_ section: Element) {
        for machine in data.machines {
            guard let all = machine.connections, let first = all.first else { continue }
            section.add("p", ["class": "note"], text: """
                One file of \(Units.bytes(first.sizeBytes)), every connection paced to \
                \(Units.rate(Double(first.paceBytesPerSecond))) as a CDN or a site paces each download: by the lab \
                server (a throttle on every GET) and by nginx (limit_rate). Lesson 11's corrected variant with \
                --connections N, aria2c -x N -s N (both check the file's SHA-256 at the end), and curl on one \
                connection. Each ran once: its time is the pace's, far above one run's noise. The grey line is N \
                times the pace, what N paced connections bring; a point above it had more: nginx lets a first \
                burst through on each response before limit_rate takes hold, and lesson 11 asks for its first \
                MiB on a connection of its own before the N ranges.
                """)
            for server in ConnectionsServer.allCases {
                let runs = all.filter { $0.server == server }
                guard !runs.isEmpty else { continue }
                section.add("h3", ["data-server": server.rawValue, "data-machine": machine.label],
                            text: (server == .lab ? "From the lab server" : "From nginx, limit_rate") + (data.isMerged ? " (\(machine.label))" : ""))
                if let said = Self.whereMoreStopsHelping(runs) {
                    section.add("p", ["class": "note", "data-finding": server.rawValue], text: said)
                }
                drawConnections(section, machine: machine, server: server, runs: runs)
                writeConnectionsTable(section, machine: machine, server: server, runs: runs)
            }
        }
    }

    /// At 4 connections, lesson 11 against aria2c and against its own one connection; and the
    /// first doubling that gained less than a quarter, with what the pace allowed there.
    static func whereMoreStopsHelping(_ runs: [ComparisonResults.ConnectionsRun]) -> String? {
        let lesson = runs.filter { $0.program == .lesson }.sorted { $0.connections < $1.connections }
        func at(_ program: ConnectionsProgram, _ count: Int) -> Double? {
            runs.first { $0.program == program && $0.connections == count }?.throughputBytesPerSecond
        }
        guard let one = at(.lesson, 1), let four = at(.lesson, 4) else { return nil }
        var said = String(format: "At 4 connections lesson 11 fetched %.1f× as fast as on one", four / one)
        if let aria = at(.aria2c, 4) { said += String(format: ", and %.2f× aria2c's speed on 4", four / aria) }
        said += ". "
        let stalls = zip(lesson, lesson.dropFirst()).first { $1.throughputBytesPerSecond < $0.throughputBytesPerSecond * 1.25 }
        guard let (before, after) = stalls else {
            return said + "Each doubling up to \(lesson.last?.connections ?? 8) still helped: every connection is paced, "
                + "and \(lesson.last?.connections ?? 8) paced connections are still less than this machine moves."
        }
        let allowed = Double(after.paceBytesPerSecond * Int64(after.connections))
        return said + "From \(before.connections) to \(after.connections) connections it gained less than a quarter "
            + "(\(Units.rate(before.throughputBytesPerSecond)) to \(Units.rate(after.throughputBytesPerSecond))), although the pace "
            + "allowed \(Units.rate(allowed)): the limit there is no longer the server's pace but this machine's, "
            + "loopback, the two cores and the disk shared by every connection."
    }

    private func drawConnections(_ section: Element, machine: ComparisonResults, server: ConnectionsServer, runs: [ComparisonResults.ConnectionsRun]) {
        let frame = Self.connectionsPlot
        let counts = ComparisonResults.connectionCounts
        let pace = Double(runs.first?.paceBytesPerSecond ?? 1)
        let upper = Tick.roundedUp(max(pace * Double(counts.max() ?? 1), runs.map(\.throughputBytesPerSecond).max() ?? 0) * 1.05)
        let x = Axis(lower: 1, upper: Double(counts.max() ?? 8), start: frame.left + 20, end: frame.right - 20, logarithmic: true)
        let y = Axis(lower: 0, upper: upper, start: frame.bottom, end: frame.top, logarithmic: false)
        let svg = chart(section, kind: "connections-\(server.rawValue)", machine: machine, height: frame.bottom + 48)
        frame.drawYTicks(Tick.linear(upTo: upper, atMost: 6, unitSuffix: "/s"), y, in: svg)
        frame.drawXTicks(counts.map { Tick(value: Double($0), label: "\($0)") }, x, in: svg, minimumGap: 20)
        frame.drawBorder(in: svg)
        svg.add("text", ["class": "axis-title", "x": ChartFrame.coordinate((frame.left + frame.right) / 2),
                         "y": ChartFrame.coordinate(frame.bottom + 38), "text-anchor": "middle"], text: "connections at once")
        let ceiling = svg.add("g", ["class": "limit", "data-limit": "pace"])
        polyline(ceiling, counts.map { (x.position(Double($0)), y.position(pace * Double($0))) },
                 SeriesLook(colour: "#9a9aa2", dashed: true))
        var legendY = frame.top + 14
        for program in ConnectionsProgram.allCases {
            let mine = runs.filter { $0.program == program }.sorted { $0.connections < $1.connections }
            guard !mine.isEmpty else { continue }
            let look = SeriesLook(colour: Self.colour(program), dashed: false)
            let group = series(svg, program.rawValue, machine: machine)
            let points = mine.map { (x: x.position(Double($0.connections)), y: y.position($0.throughputBytesPerSecond)) }
            if points.count > 1 { polyline(group, points, look) }
            for (run, point) in zip(mine, points) {
                group.add("circle", ["cx": ChartFrame.coordinate(point.x), "cy": ChartFrame.coordinate(point.y), "r": "4.5",
                                     "fill": look.colour, "data-connections": String(run.connections),
                                     "data-throughput": String(run.throughputBytesPerSecond)])
            }
            group.add("rect", ["x": ChartFrame.coordinate(frame.right + 16), "y": ChartFrame.coordinate(legendY - 9),
                               "width": "18", "height": "4", "fill": look.colour])
            group.add("text", ["class": "bar-label", "x": ChartFrame.coordinate(frame.right + 40), "y": ChartFrame.coordinate(legendY)],
                      text: program.rawValue)
            legendY += 18
        }
        svg.add("text", ["class": "tick", "x": ChartFrame.coordinate(frame.right + 16), "y": ChartFrame.coordinate(legendY)],
                text: "grey: N × \(Units.rate(pace))")
    }

    /// Okabe and Ito's colour-blind-safe palette, as the exchange charts use it.
    private static func colour(_ program: ConnectionsProgram) -> String {
        switch program {
        case .lesson: "#0072B2"
        case .aria2c: "#E69F00"
        case .curl: "#009E73"
        }
    }

    private func writeConnectionsTable(_ section: Element, machine: ComparisonResults, server: ConnectionsServer, runs: [ComparisonResults.ConnectionsRun]) {
        let columns = [Column("Program"), Column("Connections", numeric: true), Column("Time (s)", numeric: true),
                       Column("Throughput", numeric: true), Column("× one connection", numeric: true),
                       Column("Peak memory", numeric: true), Column("Fetched twice", numeric: true)]
        let body = table(section, id: "connections-\(server.rawValue)", columns: columns, caption: data.isMerged ? machine.label : nil)
        for run in runs {
            let row = body.add("tr", ["data-program": run.program.rawValue, "data-connections": String(run.connections)])
            row.add("td", text: run.program.rawValue)
            numberCell(row, raw: String(run.connections), shown: String(run.connections))
            numberCell(row, raw: String(run.wallSeconds), shown: Units.seconds(run.wallSeconds))
            numberCell(row, raw: String(run.throughputBytesPerSecond), shown: Units.rate(run.throughputBytesPerSecond))
            let alone = runs.first { $0.program == run.program && $0.connections == 1 }?.throughputBytesPerSecond
            let gain = alone.map { run.throughputBytesPerSecond / $0 }
            numberCell(row, raw: gain.map { String($0) } ?? "", shown: gain.map { String(format: "%.2f×", $0) } ?? "–")
            numberCell(row, raw: String(run.peakRSSBytes), shown: Units.bytes(run.peakRSSBytes))
            numberCell(row, raw: run.fetchedTwiceBytes.map { String($0) } ?? "", shown: run.fetchedTwiceBytes.map { Units.bytes($0) } ?? "–")
        }
    }
}
