import Foundation
import TestFolders
import LabReport
import LabVocabulary
import Testing

/// The report, rendered from a results file written and read back, then parsed by libxml2's HTML
/// parser: the numbers, outcomes, charts and links a reader sees are the ones in the file, and
/// nothing in the file becomes markup.
struct HTMLReportTests {
    typealias Fixture = ReportFixture

    /// The fixture through `write(to:)` and `read(from:)`, rendered and parsed.
    private static func roundTrip(_ results: ComparisonResults, lessonPagesPath: String? = "../../Lessons/") throws
        -> (results: ComparisonResults, html: String, page: ParsedPage) {
        let file = TestFolders.root.appendingPathComponent("results-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try results.write(to: file)
        let read = try ComparisonResults.read(from: file)
        #expect(read == results)
        let html = HTMLReport(results: [read], lessonPagesPath: lessonPagesPath).render()
        return (read, html, try ParsedPage(html))
    }

    private static func row(_ rows: [ParsedPage.Element], _ run: ComparisonResults.Run) -> ParsedPage.Element? {
        rows.first { $0["data-lesson"] == run.lesson && $0["data-variant"] == run.variant.rawValue }
    }

    /// The raw values of a row's numeric cells, in column order.
    private static func values(_ row: ParsedPage.Element) -> [String] {
        row.all("td").compactMap { $0["data-value"] }
    }

    private static func measurements(_ run: ComparisonResults.Run) -> [String] {
        [String(run.wallSeconds), String(run.cpuSeconds), String(run.peakRSSBytes),
         String(run.throughputBytesPerSecond), String(run.bytesOnWire), String(run.bytesDownloadedAgain)]
    }

    @Test func everyCleanRunIsInTheTableOfItsSizeWithItsExactNumbers() throws {
        let (results, _, page) = try Self.roundTrip(Fixture.results())
        for size in Fixture.sizes {
            let runs = results.runs.filter { $0.scenario == .clean && $0.sizeBytes == size }
            let rows = page.table("size-\(size)")
            #expect(rows.count == runs.count, "size \(size)")
            for run in runs {
                let row = try #require(Self.row(rows, run), "\(run.lesson) \(run.variant) at \(size)")
                #expect(Self.values(row) == Self.measurements(run))
                #expect(row.all("td").contains { $0["data-status"] == run.status.rawValue })
            }
        }
        let megabytes = try #require(page.table("size-\(Fixture.sizes[2])").first { $0["data-lesson"] == LessonID.outputStream.rawValue && $0["data-variant"] == Variant.corrected.rawValue })
        #expect(megabytes.all("td").contains { $0["data-value"] == "40123458" && $0.text == "38.3 MiB" })
    }

    @Test func faultAndReferenceTablesHoldTheirNumbers() throws {
        let (results, _, page) = try Self.roundTrip(Fixture.results())
        let faults = results.runs.filter { $0.scenario != .clean }
        let rows = page.table("faults")
        #expect(rows.count == faults.count)
        for run in faults {
            let row = try #require(rows.first {
                $0["data-lesson"] == run.lesson && $0["data-variant"] == run.variant.rawValue
                    && $0.all("td").contains { $0.text == run.scenario.rawValue }
            })
            #expect(Self.values(row) == [String(run.sizeBytes)] + Self.measurements(run))
        }

        let references = page.table("references")
        #expect(references.map { $0["data-reference"] } == results.references.map(\.kind.rawValue))
        for (row, reference) in zip(references, results.references) {
            #expect(Self.values(row) == [String(reference.sizeBytes), String(reference.wallSeconds),
                                         String(reference.throughputBytesPerSecond)] + (reference.peakRSSBytes.map { [String($0)] } ?? []))
            #expect(row.all("td").contains { $0.text == reference.detail })
        }
    }

    @Test func theFaultMatrixShowsEachOutcomeAndMarksExpectedFailures() throws {
        let (results, _, page) = try Self.roundTrip(Fixture.results())
        let rows = page.table("fault-matrix")
        #expect(rows.count == 5)
        for run in results.runs where run.scenario != .clean {
            let row = try #require(Self.row(rows, run))
            let cell = try #require(row.all("td", "data-scenario", run.scenario.rawValue).first)
            #expect(cell["data-status"] == run.status.rawValue, "\(run.lesson) \(run.variant) \(run.scenario)")
            #expect(cell["data-expected"] == String(run.expectedFailure))
            #expect(cell["data-downloaded-again"] == String(run.bytesDownloadedAgain))
            let marked = cell.all("span").contains { $0.hasClass("mark") && $0.text == "expected" }
            #expect(marked == (run.status == .fail && run.expectedFailure))
            let standsOut = cell.all("span").contains { $0.hasClass("unexpected") }
            #expect(standsOut == (run.status == .fail && !run.expectedFailure))
        }
        let refusedClean = try #require(rows.first { $0["data-lesson"] == LessonID.smallFile.rawValue }?.all("td", "data-scenario", "clean").first)
        #expect(refusedClean["data-status"] == ComparisonResults.RunStatus.refused.rawValue)
        #expect(refusedClean.text.contains("at 256 MiB"))
        let notRun = try #require(rows.first { $0["data-lesson"] == LessonID.inMemory.rawValue }?.all("td", "data-scenario", "ignore-range").first)
        #expect(notRun["data-status"] == nil && notRun.text == "not run")
    }

    @Test func eachChartHasOneSeriesPerLineOrBar() throws {
        let (_, _, page) = try Self.roundTrip(Fixture.results())
        func series(_ chart: String) throws -> [String] {
            let svgs = page.root.all("svg", "data-chart", chart)
            try #require(svgs.count == 1, "\(chart)")
            return svgs[0].all("g").filter { $0.hasClass("series") }.compactMap { $0["data-series"] }
        }
        let lines = ["01-in-memory article", "01-in-memory corrected", "03-outputstream article", "03-outputstream corrected"]
        // Lesson 00 corrected refused the largest file: it has no timeline, but its two smaller
        // sizes are on the memory chart and its refusal is a row of the throughput chart.
        #expect(try series("peak-rss") == ["00-small-file corrected"] + lines)
        #expect(try series("rss-timeline") == lines)
        #expect(try series("throughput") == ["00-small-file corrected"] + lines + ["curl", "wget"])

        let peak = try #require(page.root.all("svg", "data-chart", "peak-rss").first)
        let inMemory = try #require(peak.all("g", "data-series", "01-in-memory article").first)
        #expect(inMemory.all("circle").count == 3)
        #expect(inMemory.all("polyline").first?["stroke-dasharray"] == "7 4")
        let corrected = try #require(peak.all("g", "data-series", "01-in-memory corrected").first)
        #expect(corrected.all("polyline").first?["stroke-dasharray"] == "none")
        let smallFile = try #require(peak.all("g", "data-series", "00-small-file corrected").first)
        #expect(smallFile.all("circle").count == 2)

        let throughput = try #require(page.root.all("svg", "data-chart", "throughput").first)
        #expect(throughput.all("g").compactMap { $0["data-limit"] } == ["disk-limit", "loopback-limit"])
        #expect(throughput.all("g", "data-series", "00-small-file corrected").first?.all("rect").isEmpty == true)
        #expect(throughput.all("g", "data-series", "curl").first?.text.contains("600 MiB/s") == true)
        let timeline = try #require(page.root.all("svg", "data-chart", "rss-timeline").first)
        #expect(timeline.all("g", "data-series", "03-outputstream corrected").first?.all("polyline").first?["points"]?
            .split(separator: " ").count == 11)
    }

    @Test func theVerdictsSayWhatTheNumbersShow() throws {
        let (_, _, page) = try Self.roundTrip(Fixture.results())
        func verdict(_ lesson: String, _ variant: String) -> ParsedPage.Element? {
            page.root.all("li").first { $0["data-lesson"] == lesson && $0["data-variant"] == variant }
        }
        let expected = [
            ("00-small-file", "corrected", "Small file in one call, corrected: grows with the file: 1.0× its size, 49 MiB at 32 MiB, refuses files over its limit"),
            ("01-in-memory", "article", "Every chunk in one buffer, article: grows with the file: 2.0× its size, 530 MiB at 256 MiB, 0.25× curl, starts over after a kill"),
            ("01-in-memory", "corrected", "Every chunk in one buffer, corrected: grows with the file: 1.0× its size, 274 MiB at 256 MiB, 0.30× curl, starts over after a kill"),
            ("03-outputstream", "article", "OutputStream append, article: flat 22 MiB at 256 MiB, 0.40× curl, resumes after a drop and a kill, fails ignore-range (expected)"),
            ("03-outputstream", "corrected", "OutputStream append, corrected: flat 38.3 MiB at 256 MiB, 0.50× curl, resumes after a kill, passes ignore-range, FAILS drop-resume (unexpected)"),
        ]
        for (lesson, variant, line) in expected {
            let item = try #require(verdict(lesson, variant))
            // The serializer may start a line inside the item; a browser shows no space there.
            #expect(item.text.trimmingCharacters(in: .whitespacesAndNewlines) == line)
            #expect(item.hasClass("attention") == (lesson == LessonID.outputStream.rawValue && variant == Variant.corrected.rawValue))
        }
    }

    @Test func theEnvironmentTableHoldsTheMachine() throws {
        let (results, _, page) = try Self.roundTrip(Fixture.results())
        let rows = page.table("environment")
        func cell(_ field: String) -> ParsedPage.Element? {
            rows.first { $0["data-field"] == field }?.all("td").first
        }
        let environment = results.environment
        #expect(cell("Label")?.text == results.label)
        #expect(cell("Hostname")?.text == environment.hostname)
        #expect(cell("CPU")?.text == environment.cpuModel)
        #expect(cell("Cores")?["data-value"] == "8")
        #expect(cell("Memory")?["data-value"] == "17179869184")
        #expect(cell("Memory")?.text == "16 GiB")
        #expect(cell("Operating system")?.text == environment.operatingSystem)
        #expect(cell("Swift")?.text == environment.swiftVersion)
        #expect(cell("Build configuration")?.text == "release")
        #expect(cell("Server")?.text == "embedded")
        #expect(cell("Server URL")?.text == environment.serverURL)
        #expect(cell("Started at")?.text == environment.startedAt)
        #expect(cell("Duration")?["data-value"] == "842.25")
        #expect(cell("Fault size")?["data-value"] == String(Fixture.faultSize))
    }

    @Test func linksEachLessonPageOrNamesItWhenThereIsNoPath() throws {
        let lessons = ["00-small-file", "01-in-memory", "03-outputstream"]
        let (_, _, linked) = try Self.roundTrip(Fixture.results())
        let links = linked.root.all("ul").first { $0.hasClass("lesson-pages") }?.all("a") ?? []
        #expect(links.compactMap { $0["href"] } == lessons.map { "../../Lessons/\($0).md" })
        #expect(links.map(\.text) == lessons.map { "\($0).md" })

        let (_, _, unlinked) = try Self.roundTrip(Fixture.results(), lessonPagesPath: nil)
        let pages = try #require(unlinked.root.all("ul").first { $0.hasClass("lesson-pages") })
        #expect(pages.all("a").isEmpty)
        #expect(pages.all("code").map(\.text) == lessons.map { "\($0).md" })
    }

    @Test func textFromTheFileNeverBecomesMarkup() throws {
        let (_, html, page) = try Self.roundTrip(Fixture.results())
        #expect(page.root.all("script").isEmpty)
        #expect(page.root.all("img").isEmpty)
        #expect(!html.lowercased().contains("<script"))
        #expect(page.root.all("strong").contains { $0.text == Fixture.hostileLabel })
        #expect(page.root.all("title").first?.text == "Download Lab comparison: " + Fixture.hostileLabel)
        #expect(page.table("environment").first { $0["data-field"] == "Hostname" }?.all("td").first?.text == Fixture.hostileHostname)
        let causes = page.root.all("span").filter { $0.hasClass("cause") }
        #expect(causes.contains { $0["title"] == Fixture.hostileCause && $0.text == Fixture.hostileCause })
        #expect(page.root.all("svg").allSatisfy { $0["data-machine"] == Fixture.hostileLabel })
    }

    /// The picture of lesson 03 under ignore-range: the article's 200 appended after the partial
    /// file, the corrected one's written from byte 0; what the file says stays text.
    @Test func theExchangesOfARunAreDrawnAndTheirTextStaysText() throws {
        let (_, _, page) = try Self.roundTrip(Fixture.results())
        let figure = try #require(page.root.all("figure").first { $0.hasClass("exchanges") && $0["data-lesson"] == "03-outputstream" })
        #expect(figure["data-scenario"] == "ignore-range")
        let lanes = figure.all("g").filter { $0.hasClass("lane") }
        #expect(lanes.compactMap { $0["data-lane"]?.components(separatedBy: ":").first } == ["article", "corrected"])
        let resumes = lanes.compactMap { $0.all("g").filter { $0.hasClass("exchange") }.last }
        #expect(resumes.map { $0["data-status"] } == ["200", "200"])
        let notes = resumes.map { $0.all("text").first { $0.hasClass("bar-note") }?.text }
        #expect(notes == ["appended after 9.6 MiB", "written from byte 0"], "\(notes)")
        let label = resumes.last?.all("text").first { $0.hasClass("bar-label") }?.text ?? ""
        #expect(label.hasPrefix("GET 200 · <g id=\"evil\">"), "\(label)")
        #expect(page.root.all("g").allSatisfy { $0["id"] != "evil" })
        #expect(figure.all("rect").filter { $0.hasClass("body") }.count == 4)
    }

    @Test func aMergedReportShowsBothMachinesEverywhere() throws {
        let lab = Fixture.results(label: "lab-linux", hostname: "ip-10-0-0-7")
        let laptop = Fixture.results(label: "laptop", hostname: "mbp.local", lessons: ["03-outputstream"])
        let page = try ParsedPage(HTMLReport(results: [lab, laptop], lessonPagesPath: nil).render())
        let labels = ["lab-linux", "laptop"]

        #expect(page.root.all("ul").first { $0.hasClass("machines") }?.all("strong").map(\.text) == labels)
        for size in Fixture.sizes {
            let rows = page.table("size-\(size)")
            let expected = (lab.runs + laptop.runs).filter { $0.scenario == .clean && $0.sizeBytes == size }
            #expect(rows.count == expected.count)
            #expect(rows.map { $0.all("td").first { $0.hasClass("label") }?.text } == rows.map { $0["data-machine"] })
            for machine in [lab, laptop] {
                for run in machine.runs where run.scenario == .clean && run.sizeBytes == size {
                    let row = try #require(rows.first {
                        $0["data-machine"] == machine.label && $0["data-lesson"] == run.lesson && $0["data-variant"] == run.variant.rawValue
                    })
                    #expect(Self.values(row) == Self.measurements(run))
                }
            }
        }
        #expect(page.table("faults").count == (lab.runs + laptop.runs).filter { $0.scenario != .clean }.count)
        #expect(Set(page.table("fault-matrix").compactMap { $0["data-machine"] }) == Set(labels))
        #expect(page.table("references").count == 8)
        #expect(page.root.all("table", "data-table", "environment").first?.all("thead").first?.all("th").map(\.text) == ["", "lab-linux", "laptop"])
        #expect(page.table("environment").first { $0["data-field"] == "Hostname" }?.all("td").map(\.text) == ["ip-10-0-0-7", "mbp.local"])

        for chart in ["peak-rss", "rss-timeline", "throughput"] {
            let svgs = page.root.all("svg", "data-chart", chart)
            #expect(svgs.map { $0["data-machine"] } == labels, "\(chart)")
            for svg in svgs {
                let series = svg.all("g").filter { $0.hasClass("series") }
                #expect(series.allSatisfy { $0["data-machine"] == svg["data-machine"] })
            }
            let laptopSeries = svgs.last?.all("g").filter { $0.hasClass("series") }.compactMap { $0["data-series"] }
            let lessonLines = ["03-outputstream article", "03-outputstream corrected"]
            #expect(laptopSeries == (chart == "throughput" ? lessonLines + ["curl", "wget"] : lessonLines), "\(chart)")
        }
        let verdicts = page.root.all("li").filter { $0["data-lesson"] == LessonID.outputStream.rawValue && $0["data-variant"] == Variant.article.rawValue }
        #expect(verdicts.compactMap { $0["data-machine"] } == labels)
    }
}

/// Students choose lessons, scenarios and sizes: the report draws what is there and leaves out
/// what is not, without failing.
struct PartialResultsTests {
    typealias Fixture = ReportFixture

    private static func page(_ runs: [ComparisonResults.Run], references: Bool = true) throws -> ParsedPage {
        var results = Fixture.results(label: "partial", hostname: "host")
        results.runs = runs
        if !references { results.references = [] }
        return try ParsedPage(HTMLReport(results: [results], lessonPagesPath: nil).render())
    }

    private static func charts(_ page: ParsedPage) -> [String] {
        page.root.all("svg").compactMap { $0["data-chart"] }
    }

    @Test func onlyFaultScenariosGiveTheMatrixAndFaultTableButNoChartsOfSizes() throws {
        let page = try Self.page(Fixture.allRuns.filter { $0.scenario != .clean }, references: false)
        // The picture of a fault scenario's exchanges is the one chart that needs no clean run.
        #expect(Self.charts(page) == ["exchanges"])
        #expect(page.root.all("table").compactMap { $0["data-table"] } == ["fault-matrix", "faults", "environment"])
        #expect(page.table("faults").count == Fixture.allRuns.filter { $0.scenario != .clean }.count)
    }

    @Test func oneCleanSizeWithoutTimelinesOrReferences() throws {
        let runs = Fixture.allRuns.filter { $0.scenario == .clean && $0.sizeBytes == Fixture.mebibyte }
        let page = try Self.page(runs, references: false)
        #expect(Self.charts(page) == ["peak-rss", "throughput"])
        #expect(page.root.all("table").compactMap { $0["data-table"] }
                == ["fault-matrix", "size-\(Fixture.mebibyte)", "environment"])
        #expect(page.root.all("svg", "data-chart", "throughput").first?.all("g").filter { $0.hasClass("series") }.count == runs.count)
        let verdict = page.root.all("li").first { $0["data-lesson"] == LessonID.outputStream.rawValue && $0["data-variant"] == Variant.corrected.rawValue }
        #expect(verdict?.text.trimmingCharacters(in: .whitespacesAndNewlines) == "OutputStream append, corrected: peak 38.3 MiB at 1 MiB")
    }

    @Test func noRunsAtAll() throws {
        let page = try Self.page([], references: false)
        #expect(Self.charts(page).isEmpty)
        #expect(page.root.all("table").compactMap { $0["data-table"] } == ["environment"])
        #expect(page.root.all("h1").first?.text == "Download Lab comparison")
    }
}

/// The lab's own cost (`#cost`) and the build in the header: what a reader needs to tell
/// Foundation's cost, the strategy's and the compiler's apart.
struct LabCostReportTests {
    typealias Fixture = ReportFixture

    /// The fixture with one corrected run at the largest size measured against Foundation's
    /// floor: its clock, its verification, its paired reference and their ratio.
    private static func results(build: BuildConfiguration = .release) -> (ComparisonResults, ComparisonResults.Run) {
        var results = Fixture.results()
        results.environment.buildConfiguration = build
        let index = results.runs.firstIndex {
            $0.lesson == LessonID.outputStream.rawValue && $0.variant == .corrected && $0.scenario == .clean && $0.sizeBytes == Fixture.sizes[2]
        }!
        results.runs[index].transferSeconds = 0.275
        results.runs[index].verificationSeconds = 0.0625
        results.runs[index].reference = .foundationFloor
        results.runs[index].referenceSeconds = 0.25
        results.runs[index].costRatio = 1.0625
        return (results, results.runs[index])
    }

    @Test func eachCorrectedRunWithAClockStandsAgainstItsReference() throws {
        let (results, run) = Self.results()
        let page = try ParsedPage(HTMLReport(results: [results], lessonPagesPath: nil).render())
        let rows = page.table("cost")
        // Only the run that has its own clock and a paired reference has a row.
        #expect(rows.count == 1)
        let row = try #require(rows.first)
        #expect(row["data-lesson"] == run.lesson)
        #expect(row["data-size"] == String(run.sizeBytes))
        let cells = row.all("td")
        #expect(cells.compactMap { $0["data-value"] } == [String(run.sizeBytes), "0.275", "0.0625", "0.25", String(run.peakRSSBytes)])
        #expect(cells.contains { $0.text == "foundation-floor" })
        let ratio = try #require(cells.first { $0["data-ratio"] != nil })
        #expect(ratio["data-ratio"] == "1.0625")
        #expect(ratio.text == "1.06×")
    }

    @Test func withoutAClockThereIsNoRowButANote() throws {
        var (results, _) = Self.results()
        for index in results.runs.indices { results.runs[index].transferSeconds = nil }
        let page = try ParsedPage(HTMLReport(results: [results], lessonPagesPath: nil).render())
        #expect(page.table("cost").isEmpty)
        #expect(page.root.all("section", "id", "cost").first?.text.contains("No corrected lesson passed") == true)
    }

    @Test(arguments: BuildConfiguration.allCases)
    func theHeaderNamesTheBuild(build: BuildConfiguration) throws {
        let (results, _) = Self.results(build: build)
        let page = try ParsedPage(HTMLReport(results: [results], lessonPagesPath: nil).render())
        let header = try #require(page.root.all("header").first)
        #expect(header.all("span", "data-build", build.rawValue).first?.text == "\(build.rawValue) build")
        let advice = header.all("p").contains { $0.text.contains("swift run -c release lab compare") }
        #expect(advice == (build == .debug))
    }
}
