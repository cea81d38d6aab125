import LabVocabulary

/// "On slow networks": the corrected lessons over each network profile that ran, the table an
/// engineer choosing a strategy for a mobile app reads. Time to first byte, throughput against
/// the link's own bandwidth, and what a drop at 30% costs each strategy there.
extension ReportWriter {
    func writeNetworks(_ section: Element) {
        section.add("p", ["class": "note"], text: """
            The corrected variants over the lab server's network profiles (docs/server-and-faults.md): \
            each downloads a file sized for the link, about 4 s of its bandwidth, once clean and once \
            with the connection dropped at 30%. First byte: from the first GET arriving at the server to \
            its response's head going out, the profile's latency and jitter included. Of the link: the \
            throughput as a share of the profile's bandwidth; the round trip, the loss's pauses and the process's start take \
            the rest. A drop costs: the run with the drop less the clean run, and the bytes the server \
            sent twice; a strategy that starts over pays for the 30% again.
            """)
        let repetitions = data.networkRuns.compactMap { $0.machine.settings.networkRepetitions }.max() ?? 1
        if repetitions < Verdict.repetitionsForSpeed {
            section.add("p", ["class": "note few-runs"], text: """
                Each run over a profile ran \(repetitions == 1 ? "once" : "\(repetitions) times"): its pauses \
                are drawn afresh each time, so a difference of a few tenths of a second between two \
                strategies says nothing. A drop's cost and the bytes fetched again do.
                """)
        }
        for (machine, runs) in data.networkRuns {
            for network in NetworkProfile.allCases {
                let over = runs.filter { $0.network == network }
                guard !over.isEmpty else { continue }
                section.add("h3", ["data-network": network.rawValue, "data-machine": machine.label],
                            text: "\(network.summary); a file of \(Units.bytes(network.compareSize))"
                                + (data.isMerged ? " (\(machine.label))" : ""))
                writeNetworkThroughput(section, machine: machine, network: network, runs: over.filter { $0.scenario == .clean })
                writeNetworkTable(section, machine: machine, network: network, runs: over)
            }
        }
    }

    private func writeNetworkTable(_ section: Element, machine: ComparisonResults, network: NetworkProfile, runs: [Run]) {
        let columns = lessonColumns + [
            Column("Outcome"), Column("First byte (s)", numeric: true), Column("Throughput", numeric: true),
            Column("Of the link", numeric: true), Column("A drop costs (s)", numeric: true), Column("Fetched again", numeric: true),
        ]
        let body = table(section, id: "network-\(network.rawValue)", columns: columns, caption: nil)
        let strategies = Set(runs.map { Strategy(lesson: $0.lesson, variant: $0.variant) }).sorted()
        for strategy in strategies {
            let mine = runs.filter { $0.lesson == strategy.lesson && $0.variant == strategy.variant }
            guard let clean = mine.first(where: { $0.scenario == .clean }) else { continue }
            let dropped = mine.first { $0.scenario == .dropResume }
            let row = lessonCells(body, strategy, machine, continued: false)
            row.set("data-network", network.rawValue)
            _ = statusCell(row, dropped.map { $0.status == .pass ? clean : $0 } ?? clean)
            if let firstByte = clean.firstByteSeconds {
                numberCell(row, raw: String(firstByte), shown: Units.seconds(firstByte))
            } else {
                numberCell(row, raw: "", shown: "–")
            }
            numberCell(row, raw: String(clean.throughputBytesPerSecond), shown: Units.rate(clean.throughputBytesPerSecond))
            let share = clean.throughputBytesPerSecond / Double(network.bytesPerSecond)
            numberCell(row, raw: String(share), shown: "\(Int((share * 100).rounded()))%")
            if let dropped, dropped.status == .pass {
                let cost = dropped.wallSeconds - clean.wallSeconds
                numberCell(row, raw: String(cost), shown: (cost >= 0 ? "+" : "−") + Units.seconds(abs(cost)))
                numberCell(row, raw: String(dropped.bytesDownloadedAgain), shown: Units.bytes(dropped.bytesDownloadedAgain))
            } else {
                numberCell(row, raw: "", shown: "–")
                numberCell(row, raw: "", shown: "–")
            }
        }
    }
}
