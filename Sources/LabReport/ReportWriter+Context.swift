import LabVocabulary

/// The report's last sections: the reference programs measured beside the lessons, the machines
/// the numbers come from, and the lesson pages.
extension ReportWriter {
    func writeReferences(_ section: Element) {
        guard data.machines.contains(where: { !$0.references.isEmpty }) else { return }
        let columns = (data.isMerged ? [Column("Machine")] : []) + [
            Column("Reference"), Column("What ran"), Column("Size", numeric: true), Column("Wall (s)", numeric: true),
            Column("Throughput", numeric: true), Column("Peak RSS", numeric: true),
        ]
        let body = table(section, id: "references", columns: columns,
                         caption: "References: other clients, and the limits of this machine")
        for machine in data.machines {
            for reference in machine.references {
                let row = body.add("tr", ["data-reference": reference.kind.rawValue, "data-machine": machine.label])
                if data.isMerged { row.add("td", ["class": "label"], text: machine.label) }
                row.add("td", text: reference.kind.rawValue)
                row.add("td", ["class": "detail"], text: reference.detail)
                numberCell(row, raw: String(reference.sizeBytes), shown: Units.bytes(reference.sizeBytes))
                numberCell(row, raw: String(reference.wallSeconds), shown: Units.seconds(reference.wallSeconds))
                numberCell(row, raw: String(reference.throughputBytesPerSecond),
                           shown: Units.rate(reference.throughputBytesPerSecond))
                if let peak = reference.peakRSSBytes {
                    numberCell(row, raw: String(peak), shown: Units.bytes(peak))
                } else {
                    row.add("td", ["class": "num none"], text: "not measured")
                }
            }
        }
    }

    func writeEnvironment(_ section: Element) {
        typealias Field = (name: String, value: (ComparisonResults) -> (raw: String?, shown: String))
        func text(_ value: @escaping (ComparisonResults) -> String) -> (ComparisonResults) -> (raw: String?, shown: String) {
            { (nil, value($0)) }
        }
        let fields: [Field] = [
            ("Label", text(\.label)),
            ("Hostname", text(\.environment.hostname)),
            ("CPU", text(\.environment.cpuModel)),
            ("Cores", { (String($0.environment.cores), String($0.environment.cores)) }),
            ("Memory", { (String($0.environment.memoryBytes), Units.bytes($0.environment.memoryBytes)) }),
            ("Operating system", text(\.environment.operatingSystem)),
            ("Swift", text(\.environment.swiftVersion)),
            ("Build configuration", text(\.environment.buildConfiguration.rawValue)),
            ("Server", text(\.environment.serverKind.rawValue)),
            ("Server URL", text(\.environment.serverURL)),
            ("Started at", text(\.environment.startedAt)),
            ("Duration", { (String($0.environment.durationSeconds), Units.duration($0.environment.durationSeconds)) }),
            ("Preset", text(\.settings.preset.rawValue)),
            ("Clean sizes", text { $0.settings.sizes.map(Units.bytes).joined(separator: ", ") }),
            ("Fault size", { (String($0.settings.faultSize), Units.bytes($0.settings.faultSize)) }),
            ("Repetitions", { (String($0.settings.repetitions), String($0.settings.repetitions)) }),
            ("Fault repetitions", { (String($0.settings.faultRunRepetitions), String($0.settings.faultRunRepetitions)) }),
            ("Slow-disk write delay", { ("\($0.settings.slowDiskWriteDelayMicroseconds)",
                                         "\($0.settings.slowDiskWriteDelayMicroseconds) µs") }),
            ("Lessons", text { $0.settings.lessons.joined(separator: ", ") }),
            ("Scenarios", text { $0.settings.scenarios.map(\.rawValue).joined(separator: ", ") }),
        ]
        let columns = [Column("")] + data.machines.map { Column($0.label) }
        let body = table(section, id: "environment", columns: columns, caption: nil)
        for field in fields {
            let row = body.add("tr", ["data-field": field.name])
            row.add("th", ["scope": "row"], text: field.name)
            for machine in data.machines {
                let (raw, shown) = field.value(machine)
                if let raw {
                    numberCell(row, raw: raw, shown: shown)
                } else {
                    row.add("td", text: shown)
                }
            }
        }
    }

    func writeLessonLinks(_ section: Element) {
        let list = section.add("ul", ["class": "lesson-pages"])
        for lesson in data.lessons {
            let item = list.add("li")
            let page = lesson + ".md"
            // Only a plain lesson id becomes part of a link; anything else stays text.
            if let lessonPagesPath, lesson.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
                item.add("a", ["href": lessonPagesPath + page], text: page)
            } else {
                item.add("code", text: page)
            }
            item.append(" — " + data.title(lesson))
        }
    }
}
