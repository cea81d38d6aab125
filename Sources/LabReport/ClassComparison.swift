import LabVocabulary

/// The comparisons a class submitted, merged through the report's own data: per lesson and
/// variant, the spread across the class's machines and which machines saw a failure nobody
/// expected. One row per strategy however many machines, so 30 students make no longer a table.
struct ClassComparison {
    typealias Element = HTMLTree.Element
    let data: ReportData

    init(_ results: [ComparisonResults]) {
        data = ReportData(results)
    }

    func write(into section: Element) {
        guard !data.machines.isEmpty else {
            section.add("p", ["class": "note"], text: "No comparisons yet: students run `lab compare --submit URL --name NAME`.")
            return
        }
        let baselines = data.machines.compactMap(data.runtimeBaseline)
        var note = """
            \(data.machines.count) machine\(data.machines.count == 1 ? "" : "s"). Each strategy's clean download at each \
            machine's largest size: the least, the median and the most across the machines.
            """
        if let baseline = Self.median(baselines.map(Double.init)) {
            note += " About \(Units.bytes(baseline)) of every peak is the runtime's own baseline, there before the first byte"
                + " (the lightest process of each machine's smallest download)."
        }
        section.add("p", ["class": "note"], text: note)
        let table = section.add("table", ["class": "spread", "data-table": "class-comparison"])
        let head = table.add("thead").add("tr")
        for title in ["Lesson", "Variant", "Machines", "Peak memory", "Throughput", "Failures nobody expected"] {
            head.add("th", ["scope": "col"], text: title)
        }
        let body = table.add("tbody")
        for strategy in data.strategies {
            var peaks: [Double] = [], rates: [Double] = [], machines = 0, unexpected: [String] = []
            for machine in data.machines {
                let clean = data.runs(machine, strategy, scenario: .clean)
                let ran = machine.runs.contains { $0.lesson == strategy.lesson && $0.variant == strategy.variant }
                guard ran else { continue }
                machines += 1
                if let largest = clean.last, largest.status == .pass {
                    peaks.append(Double(largest.peakRSSBytes))
                    rates.append(largest.throughputBytesPerSecond)
                }
                if Verdict(strategy, on: machine, in: data).hasUnexpectedFailure { unexpected.append(machine.label) }
            }
            let row = body.add("tr", ["data-lesson": strategy.lesson, "data-variant": strategy.variant.rawValue])
            if !unexpected.isEmpty { row.set("class", "attention") }
            row.add("td", text: data.title(strategy.lesson))
            row.add("td", text: strategy.variant.rawValue)
            row.add("td", ["class": "num"], text: String(machines))
            row.add("td", ["class": "num"], text: Self.spread(peaks, Units.bytes))
            row.add("td", ["class": "num"], text: Self.spread(rates, Units.rate))
            row.add("td", ["data-unexpected": String(unexpected.count)], text: unexpected.isEmpty ? "none" : unexpected.joined(separator: ", "))
        }
    }

    /// "31.2 MiB · 33.0 MiB · 40.1 MiB", or one value, or a dash.
    private static func spread(_ values: [Double], _ format: (Double) -> String) -> String {
        let sorted = values.sorted()
        guard let least = sorted.first, let most = sorted.last, let median = median(sorted) else { return "–" }
        return sorted.count == 1 ? format(least) : [least, median, most].map(format).joined(separator: " · ")
    }

    private static func median(_ values: [Double]) -> Double? {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return nil }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}

extension ReportData {
    /// The runtime's own memory before the first byte, as near as a comparison shows it: the
    /// lightest passing process of the machine's smallest clean download. About 40 MiB of Swift
    /// runtime, Foundation and the lab's kit on Linux, whatever the strategy.
    func runtimeBaseline(_ machine: ComparisonResults) -> Int64? {
        let clean = machine.loopbackRuns.filter { $0.scenario == .clean && $0.status == .pass }
        guard let smallest = clean.map(\.sizeBytes).min() else { return nil }
        return clean.filter { $0.sizeBytes == smallest }.map(\.peakRSSBytes).min()
    }
}
