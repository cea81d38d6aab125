/// One self-contained HTML page drawn from one or more `results.json` files: verdicts, the fault
/// matrix, charts of memory and speed, every number in tables, and the machines they come from.
///
/// Everything taken from the files enters the page through libxml2's text and attribute calls,
/// never as markup. The page loads nothing and runs no script.
import LabVocabulary
public struct HTMLReport {
    let results: [ComparisonResults]
    let lessonPagesPath: String?

    /// `results`: one element per machine, in order. `lessonPagesPath`: a path prefix for links to the
    /// lesson pages, e.g. "../../Lessons/" (link = prefix + "<lesson id>.md"); nil shows the page names as text.
    public init(results: [ComparisonResults], lessonPagesPath: String?) {
        self.results = results
        self.lessonPagesPath = lessonPagesPath
    }

    /// The whole HTML document, UTF-8.
    public func render() -> String {
        let tree = HTMLTree()
        ReportWriter(data: ReportData(results), lessonPagesPath: lessonPagesPath).write(into: tree.root)
        return tree.serialized()
    }
}

/// Writes the report's sections, in the order a student reads them.
struct ReportWriter {
    typealias Element = HTMLTree.Element
    typealias Run = ComparisonResults.Run

    let data: ReportData
    let lessonPagesPath: String?

    func write(into html: Element) {
        html.set("lang", "en")
        let head = html.add("head")
        head.add("meta", ["charset": "utf-8"])
        head.add("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"])
        head.add("title", text: "Download Lab comparison: " + data.machines.map(\.label).joined(separator: ", "))
        head.add("style", text: ReportStyle.css)
        let body = html.add("body")
        writeHeader(body)
        writeVerdicts(section(body, id: "verdicts", title: "Verdicts"))
        writeFaultMatrix(section(body, id: "fault-matrix", title: "Fault matrix"))
        writeExchangeCharts(section(body, id: "exchanges", title: "Every exchange, against time"))
        writePeakRSSCharts(section(body, id: "memory", title: "Peak memory against file size"))
        writeTimelineCharts(section(body, id: "timeline", title: "Memory during the largest download"))
        writeThroughputCharts(section(body, id: "throughput", title: "Throughput of the largest download"))
        if data.machines.contains(where: { $0.connections != nil }) {
            writeConnections(section(body, id: "connections", title: "Several connections at once"))
        }
        if !data.networkRuns.isEmpty {
            writeNetworks(section(body, id: "networks", title: "On slow networks"))
        }
        writeLabCost(section(body, id: "cost", title: "The lab's own cost"))
        writeNumberTables(section(body, id: "numbers", title: "All the numbers"))
        writeEnvironment(section(body, id: "environment", title: "Machines"))
        writeLessonLinks(section(body, id: "lessons", title: "Lesson pages"))
    }

    private func section(_ body: Element, id: String, title: String) -> Element {
        let section = body.add("section", ["id": id])
        section.add("h2", text: title)
        return section
    }

    // MARK: Header and verdicts

    private func writeHeader(_ body: Element) {
        let header = body.add("header")
        header.add("h1", text: "Download Lab comparison")
        let machines = header.add("ul", ["class": "machines"])
        for machine in data.machines {
            let item = machines.add("li")
            item.add("strong", ["class": "label"], text: machine.label)
            item.append(" · \(Units.date(machine.environment.startedAt)) · preset \(machine.settings.preset)")
            item.append(" · \(machine.settings.repetitionsSaid)")
            item.append(" · \(machine.environment.cpuModel), \(machine.environment.cores) cores · ")
            item.add("span", ["class": "build", "data-build": machine.environment.buildConfiguration.rawValue],
                     text: "\(machine.environment.buildConfiguration) build")
        }
        if data.machines.contains(where: { $0.environment.buildConfiguration != .release }) {
            header.add("p", ["class": "note build-note"], text: """
                Measured with a debug build, which is what `swift run` builds: it shows how the strategies \
                compare, but its times are the compiler's as much as the strategy's. For speed figures, run \
                `swift run -c release lab compare`.
                """)
        }
        header.add("p", ["class": "note"], text: """
            Sizes, memory and throughput are in binary units: 1 KiB = 1024 bytes, 1 MiB = 1024 KiB, \
            1 GiB = 1024 MiB. Every number is the median over the repetitions. Memory is peak resident \
            memory (RSS) of the lesson's process.
            """)
        let contents = header.add("nav").add("ul", ["class": "contents"])
        for (id, title) in [("verdicts", "Verdicts"), ("fault-matrix", "Fault matrix"), ("exchanges", "Exchanges"), ("memory", "Peak memory"),
                            ("timeline", "Memory over time"), ("throughput", "Throughput"), ("cost", "The lab's cost"),
                            ("numbers", "Numbers"),
                            ("environment", "Machines"), ("lessons", "Lesson pages")] {
            contents.add("li").add("a", ["href": "#" + id], text: title)
        }
    }

    private func writeVerdicts(_ section: Element) {
        let baselines = data.machines.compactMap(data.runtimeBaseline).map(Units.bytes)
        section.add("p", ["class": "note"], text: """
            Memory: flat, or growing with the file, from the clean runs at the smallest and largest size. \
            Speed: against curl on the same file. Then what each fault scenario did.
            """ + (baselines.isEmpty ? "" : """
             Every peak includes the runtime's own memory before the first byte (\(baselines.joined(separator: ", "))), \
            so a flat strategy's peak is that and a few MiB.
            """))
        let list = section.add("ul", ["class": "verdicts"])
        for strategy in data.strategies {
            let machines = data.machines.filter { machine in
                machine.runs.contains { $0.lesson == strategy.lesson && $0.variant == strategy.variant }
            }
            var lines = list
            if data.isMerged {
                let group = list.add("li", ["class": "group"])
                group.add("strong", text: data.name(strategy))
                lines = group.add("ul")
            }
            for machine in machines {
                let verdict = Verdict(strategy, on: machine, in: data)
                let item = lines.add("li", ["data-lesson": strategy.lesson, "data-variant": strategy.variant.rawValue,
                                            "data-machine": machine.label])
                if verdict.hasUnexpectedFailure { item.set("class", "attention") }
                if data.isMerged {
                    item.add("span", ["class": "label"], text: machine.label)
                } else {
                    item.add("strong", text: data.name(strategy))
                }
                item.append(": " + verdict.line)
            }
        }
    }

    // MARK: Fault matrix

    private func writeFaultMatrix(_ section: Element) {
        guard !data.strategies.isEmpty else {
            section.add("p", ["class": "note"], text: "No runs in these results.")
            return
        }
        let sizes = Set(data.machines.map(\.settings.faultSize)).sorted().map(Units.bytes)
        section.add("p", ["class": "note"], text: """
            The fault scenarios at the fault size (\(sizes.joined(separator: " or "))); "clean" sums up the \
            clean runs at every size, naming the size where one did not pass. Each cell: the outcome, why \
            it failed, and the bytes downloaded again beyond one copy of the file.
            """)
        writeMatrixLegend(section)
        let rows = data.strategies.flatMap { strategy in
            data.machines.compactMap { machine -> (strategy: Strategy, machine: ComparisonResults, cells: [Scenario: Run])? in
                var cells: [Scenario: Run] = [:]
                for scenario in data.scenarios {
                    let runs = data.runs(machine, strategy, scenario: scenario)
                    cells[scenario] = scenario == Scenario.clean
                        ? Self.leastSuccessful(runs)
                        : runs.first { $0.sizeBytes == machine.settings.faultSize } ?? runs.first
                }
                return cells.isEmpty ? nil : (strategy, machine, cells)
            }
        }
        let columns = data.scenarios.map { Column($0 == .clean ? "clean (every size)" : $0.rawValue) }
        let body = table(section, id: "fault-matrix", columns: lessonColumns + columns, caption: nil)
        for (index, (strategy, machine, cells)) in rows.enumerated() {
            let row = lessonCells(body, strategy, machine, continued: index > 0 && rows[index - 1].strategy == strategy)
            for scenario in data.scenarios {
                guard let run = cells[scenario] else {
                    row.add("td", ["class": "not-run", "data-scenario": scenario.rawValue], text: "not run")
                    continue
                }
                let standsForSeveralSizes = scenario == .clean && run.status != .pass
                let cell = statusCell(row, run, size: standsForSeveralSizes ? run.sizeBytes : nil)
                cell.set("data-scenario", scenario.rawValue)
                cell.set("data-downloaded-again", String(run.bytesDownloadedAgain))
                if run.bytesDownloadedAgain > 0 {
                    cell.add("span", ["class": "again"], text: "again: \(Units.bytes(run.bytesDownloadedAgain))")
                }
                if let launch = run.secondLaunch {
                    // What the second launch asked, and what it brought: "HEAD 200; 0 B".
                    cell.add("span", ["class": "second-launch"],
                             text: (launch.requests.isEmpty ? "no request" : launch.requests.joined(separator: ", "))
                                 + "; \(Units.bytes(launch.bodyBytes))")
                }
            }
        }
    }

    /// The run that stands for several sizes: the first unexpected failure, else the first
    /// expected one, else the first refusal, else the largest pass.
    private static func leastSuccessful(_ runs: [Run]) -> Run? {
        func severity(_ run: Run) -> Int {
            switch run.status {
            case .pass: 0
            case .refused: 1
            default: run.expectedFailure ? 2 : 3
            }
        }
        let worst = runs.map(severity).max() ?? 0
        return worst == 0 ? runs.last : runs.first { severity($0) == worst }
    }

    private func writeMatrixLegend(_ section: Element) {
        let legend = section.add("ul", ["class": "matrix-legend"])
        let entries = [
            ("pass", "pass", "every repetition downloaded the file and it verified"),
            ("fail expected", "fail expected", "a defect the article variant is there to show"),
            ("fail unexpected", "FAIL", "a failure nobody meant: look here first"),
            ("refused", "refused", "declined on purpose with a clear error, e.g. a file too big to hold"),
        ]
        for (style, badge, meaning) in entries {
            let item = legend.add("li")
            item.add("span", ["class": "status \(style)"], text: badge)
            item.append(" " + meaning)
        }
    }

    // MARK: Tables

    struct Column {
        let title: String
        let numeric: Bool

        init(_ title: String, numeric: Bool = false) {
            self.title = title
            self.numeric = numeric
        }
    }

    var lessonColumns: [Column] {
        [Column("Lesson"), Column("Variant")] + (data.isMerged ? [Column("Machine")] : [])
    }

    private static let measurementColumns = [
        Column("Wall (s)", numeric: true), Column("CPU (s)", numeric: true), Column("Peak RSS", numeric: true),
        Column("Throughput", numeric: true), Column("On the wire", numeric: true),
        Column("Downloaded again", numeric: true),
    ]

    /// A table with a head row; returns its body.
    func table(_ parent: Element, id: String, columns: [Column], caption: String?) -> Element {
        let table = parent.add("table", ["data-table": id])
        if let caption { table.add("caption", text: caption) }
        let head = table.add("thead").add("tr")
        for column in columns {
            head.add("th", column.numeric ? ["class": "num", "scope": "col"] : ["scope": "col"], text: column.title)
        }
        return table.add("tbody")
    }

    /// A new row starting with the lesson, the variant and, when there are several, the machine.
    /// `continued`: the row before is the same lesson × variant on another machine.
    func lessonCells(_ body: Element, _ strategy: Strategy, _ machine: ComparisonResults, continued: Bool) -> Element {
        let row = body.add("tr", ["data-lesson": strategy.lesson, "data-variant": strategy.variant.rawValue,
                                  "data-machine": machine.label])
        if continued { row.set("class", "continued") }
        let lesson = row.add("td", ["class": "lesson"], text: data.title(strategy.lesson))
        lesson.add("span", ["class": "lesson-id"], text: strategy.lesson)
        row.add("td", ["class": "variant \(strategy.variant.rawValue)"], text: strategy.variant.rawValue)
        if data.isMerged { row.add("td", ["class": "label"], text: machine.label) }
        return row
    }

    /// Causes longer than this are cut short in a cell; the whole text is its tooltip.
    private static let causeCharacters = 72

    /// The outcome of a run, marked expected or not, with its cause; `size` names the file size
    /// when the cell stands for several.
    func statusCell(_ row: Element, _ run: Run, size: Int64? = nil) -> Element {
        let unexpected = run.status == .fail && !run.expectedFailure
        let style = run.status == .fail ? (run.expectedFailure ? "fail expected" : "fail unexpected") : run.status.rawValue
        let cell = row.add("td", ["class": "outcome", "data-status": run.status.rawValue,
                                  "data-expected": run.expectedFailure ? "true" : "false"])
        cell.add("span", ["class": "status \(style)"], text: unexpected ? "FAIL" : run.status.rawValue)
        if run.status == .fail && run.expectedFailure { cell.add("span", ["class": "mark"], text: "expected") }
        if let size { cell.add("span", ["class": "size"], text: "at \(Units.bytes(size))") }
        if let cause = run.cause {
            cell.add("span", ["class": "cause", "title": cause], text: ChartFrame.shortened(cause, to: Self.causeCharacters))
        }
        return cell
    }

    func numberCell(_ row: Element, raw: String, shown: String) {
        row.add("td", ["class": "num", "data-value": raw], text: shown)
    }

    private func measurementCells(_ row: Element, _ run: Run) {
        numberCell(row, raw: String(run.wallSeconds), shown: Units.seconds(run.wallSeconds))
        numberCell(row, raw: String(run.cpuSeconds), shown: Units.seconds(run.cpuSeconds))
        numberCell(row, raw: String(run.peakRSSBytes), shown: Units.bytes(run.peakRSSBytes))
        numberCell(row, raw: String(run.throughputBytesPerSecond), shown: Units.rate(run.throughputBytesPerSecond))
        numberCell(row, raw: String(run.bytesOnWire), shown: Units.bytes(run.bytesOnWire))
        numberCell(row, raw: String(run.bytesDownloadedAgain), shown: Units.bytes(run.bytesDownloadedAgain))
    }

    /// Each corrected lesson against the client that does the same transfer with nothing around
    /// it: Foundation's floor for a download, `curl -F` for the upload.
    private func writeLabCost(_ section: Element) {
        section.add("p", ["class": "note"], text: """
            What the strategy and the lab's plumbing (the inspector, bounded queues, progress) cost on top \
            of the bare transfer. Transfer: the lesson's own clock from its first attempt to the end of \
            its last (no process start-up, no verification). Reference: the same bytes with nothing \
            else, foundation-floor (a bare URLSession data delegate writing to a FileHandle) for a \
            download, curl -F for the upload, run right before each repetition of the lesson; its time \
            is its whole process. Ratio: the middle of the repetitions' transfer ÷ paired reference. \
            Verification: reading the file back and hashing it, which neither reference does. \
            Corrected variants, clean runs.
            """)
        typealias Measured = (machine: ComparisonResults, run: Run, reference: ReferenceKind, transfer: Double,
                              referenceSeconds: Double, ratio: Double)
        let measured: [Measured] = data.machines.flatMap { machine in
            machine.runs.sorted { ($0.lesson, $0.sizeBytes) < ($1.lesson, $1.sizeBytes) }.compactMap { run in
                guard run.status == .pass, let reference = run.reference, let transfer = run.transferSeconds,
                      let referenceSeconds = run.referenceSeconds, let ratio = run.costRatio
                else { return nil }
                return (machine, run, reference, transfer, referenceSeconds, ratio)
            }
        }
        guard !measured.isEmpty else {
            section.add("p", ["class": "note"], text: "No corrected lesson passed a clean run next to its reference here.")
            return
        }
        let columns = (data.isMerged ? [Column("Machine")] : []) + [
            Column("Lesson"), Column("Size", numeric: true), Column("Transfer (s)", numeric: true),
            Column("Verification (s)", numeric: true), Column("Reference"), Column("Reference (s)", numeric: true),
            Column("Ratio", numeric: true), Column("Peak RSS", numeric: true),
        ]
        let body = table(section, id: "cost", columns: columns, caption: "Corrected lessons against the bare transfer")
        for entry in measured {
            let run = entry.run
            let row = body.add("tr", ["data-lesson": run.lesson, "data-machine": entry.machine.label,
                                      "data-size": String(run.sizeBytes)])
            if data.isMerged { row.add("td", ["class": "label"], text: entry.machine.label) }
            let lesson = row.add("td", ["class": "lesson"], text: data.title(run.lesson))
            lesson.add("span", ["class": "lesson-id"], text: run.lesson)
            numberCell(row, raw: String(run.sizeBytes), shown: Units.bytes(run.sizeBytes))
            numberCell(row, raw: String(entry.transfer), shown: Units.seconds(entry.transfer))
            let verification = run.verificationSeconds ?? 0
            numberCell(row, raw: String(verification), shown: Units.seconds(verification))
            row.add("td", text: entry.reference.rawValue)
            numberCell(row, raw: String(entry.referenceSeconds), shown: Units.seconds(entry.referenceSeconds))
            row.add("td", ["class": "num", "data-ratio": String(entry.ratio)], text: Units.ratio(entry.ratio))
            numberCell(row, raw: String(run.peakRSSBytes), shown: Units.bytes(run.peakRSSBytes))
        }
    }

    private func writeNumberTables(_ section: Element) {
        for size in data.cleanSizes {
            let body = table(section, id: "size-\(size)",
                             columns: lessonColumns + [Column("Status")] + Self.measurementColumns,
                             caption: "Clean download of a \(Units.bytes(size)) file")
            var previous: Strategy?
            for strategy in data.strategies {
                for machine in data.machines {
                    for run in data.runs(machine, strategy, scenario: Scenario.clean) where run.sizeBytes == size {
                        let row = lessonCells(body, strategy, machine, continued: previous == strategy)
                        previous = strategy
                        _ = statusCell(row, run)
                        measurementCells(row, run)
                    }
                }
            }
        }
        let faultScenarios = data.scenarios.filter { $0 != Scenario.clean }
        if !faultScenarios.isEmpty {
            let body = table(section, id: "faults",
                             columns: lessonColumns + [Column("Scenario"), Column("Size", numeric: true), Column("Status")]
                                + Self.measurementColumns,
                             caption: "Fault scenarios")
            for scenario in faultScenarios {
                var previous: Strategy?
                for strategy in data.strategies {
                    for machine in data.machines {
                        for run in data.runs(machine, strategy, scenario: scenario) {
                            let row = lessonCells(body, strategy, machine, continued: previous == strategy)
                            previous = strategy
                            row.add("td", ["class": "scenario"], text: scenario.rawValue)
                            numberCell(row, raw: String(run.sizeBytes), shown: Units.bytes(run.sizeBytes))
                            _ = statusCell(row, run)
                            measurementCells(row, run)
                        }
                    }
                }
            }
        }
        writeReferences(section)
    }
}
