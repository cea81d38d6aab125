import LabVocabulary

/// The report's pictures of runs: for each lesson, the scenario `lab compare` kept the exchanges
/// of, article above corrected.
extension ReportWriter {
    func writeExchangeCharts(_ section: Element) {
        let machine = data.machines.first { $0.runs.contains { $0.exchangeTimeline != nil } }
        guard let machine else {
            section.add("p", ["class": "note"], text: "These results keep no run's exchanges (a results file from before they were kept).")
            return
        }
        section.add("p", ["class": "note"], text: """
            For each lesson, one run under the fault that shows its article's main defect (or a drop, or a clean run), \
            article above corrected on one time axis, as a browser's network panel draws requests: a bar from the \
            request to its last byte, pale while it waits for the response's head. Orange is a 200 (the whole file \
            from byte 0), blue a 206 (the rest of it), green a 304, vermillion an error or a transfer that broke; \
            each label says the same in words, with the fault the server played on that request. A dashed line marks \
            what happened besides the requests: a press of Pause or Resume, a second launch, lesson 09's app suspended, \
            ended or relaunched, a kill and the run after it (a killed run's requests are drawn from the \
            server's log). The purple line \
            under the bars is the bytes on disk; the grey line the file's size. So that the samples of the disk \
            (every 10 ms) catch each request's effect, these runs are paced to about a quarter of a second for \
            the whole file.
            """ + (data.isMerged ? " From \(machine.label)." : ""))
        for lesson in data.lessons {
            guard let (chart, first) = ExchangeChart.of(lesson, in: machine) else { continue }
            let figure = section.add("figure", ["class": "chart exchanges", "data-lesson": lesson, "data-scenario": first.scenario.rawValue])
            figure.add("figcaption", text: ExchangeChart.caption(first, title: data.title(lesson)))
            let svg = figure.add("svg", [
                "xmlns": "http://www.w3.org/2000/svg", "viewBox": "0 0 \(Int(ChartFrame.width)) \(Int(chart.height.rounded(.up)))",
                "role": "img", "data-chart": "exchanges", "data-machine": machine.label, "aria-label": "exchanges of lesson \(lesson) against time",
            ])
            chart.draw(in: svg)
        }
    }
}
