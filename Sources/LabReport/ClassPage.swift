import Foundation
import LabVocabulary

/// The teacher's page of a class: who has fixed what, where the class is stuck, and how the
/// strategies ran on the class's machines. Drawn through libxml2 like the report, so a name
/// with markup in it shows as text. Without scripts it is a plain page that shows everything;
/// `liveScript` swaps in the fresh page while the class works.
public struct ClassPage {
    let grid: ClassGrid
    /// Where the page's script is, relative to the page.
    let scriptPath: String?
    /// Where the names' release buttons post, relative to the page; nil draws no buttons.
    let releasePath: String?
    let now: Date
    /// "14:05" for each submission's time, made once: a page shows thousands of cells, and a
    /// date formatter made for each took most of the page's drawing.
    private let clockTimes: [String: String]
    private let nowOnTheClock: String

    public init(grid: ClassGrid, scriptPath: String?, releasePath: String?, now: Date = Date()) {
        self.grid = grid
        self.scriptPath = scriptPath
        self.releasePath = releasePath
        self.now = now
        let (reader, clock) = (ISO8601DateFormatter(), DateFormatter())
        clock.locale = Locale(identifier: "en_GB")
        clock.dateFormat = "HH:mm"
        clockTimes = Dictionary(Set(grid.cells.map(\.submittedAt)).map { ($0, reader.date(from: $0).map(clock.string(from:)) ?? $0) },
                                uniquingKeysWith: { first, _ in first })
        nowOnTheClock = clock.string(from: now)
    }

    public func render() -> String {
        let tree = HTMLTree()
        let html = tree.root
        html.set("lang", "en")
        let head = html.add("head")
        head.add("meta", ["charset": "utf-8"])
        head.add("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"])
        head.add("title", text: "Download Lab class")
        head.add("style", text: ClassPageStyle.css)
        if let scriptPath { head.add("script", ["src": scriptPath, "defer": "defer"]) }
        let body = html.add("body", ["data-submissions": String(grid.submissions)])
        let main = body.add("main")
        writeSummary(main)
        writeGrid(main)
        writeStuck(main)
        writeComparison(main)
        writeNames(main)
        return tree.serialized()
    }

    typealias Element = HTMLTree.Element
    typealias Standing = ClassGrid.Standing

    /// "14:05", the server's time zone: the teacher's.
    private func time(_ iso8601: String) -> String {
        clockTimes[iso8601] ?? iso8601
    }

    private func writeSummary(_ main: Element) {
        let header = main.add("header")
        header.add("h1", text: "Download Lab class")
        let facts = header.add("p", ["class": "facts"])
        facts.add("strong", ["id": "student-count"], text: "\(grid.students.count) student\(grid.students.count == 1 ? "" : "s")")
        facts.append(" · \(grid.submissions) submission\(grid.submissions == 1 ? "" : "s") · as of \(nowOnTheClock)")
        facts.add("span", ["id": "live"], text: " · reload the page for new submissions")
        let legend = header.add("ul", ["class": "legend"])
        for standing in Standing.allCases {
            let item = legend.add("li")
            item.add("span", ["class": "mark \(Self.style(standing))"], text: Self.mark(standing))
            item.append(" " + standing.rawValue)
        }
    }

    static func style(_ standing: Standing) -> String {
        switch standing {
        case .fixed: "fixed"
        case .failing: "failing"
        case .doesNotCompile: "broken"
        case .notStarted: "not-started"
        case .baseline: "baseline"
        case .notRun: "not-run"
        }
    }

    static func mark(_ standing: Standing) -> String {
        switch standing {
        case .fixed: "✔"
        case .failing: "✗"
        case .doesNotCompile: "⚠"
        case .notStarted: "○"
        case .baseline: "–"
        case .notRun: "·"
        }
    }

    /// One section per exercise, students down and its checks across, the last row the class's
    /// pass rate. The exercises the class is on are open, the rest folded a click away: at
    /// 1280×720 the work at hand fits across without scrolling sideways.
    private func writeGrid(_ main: Element) {
        let section = main.add("section", ["id": "grid"])
        guard !grid.students.isEmpty else {
            section.add("p", ["class": "note"], text: "No submissions yet. Students submit with the line `lab class serve` printed.")
            return
        }
        let current = currentExercises
        var exercises: [String] = []
        for column in grid.columns where !exercises.contains(column.exercise) { exercises.append(column.exercise) }
        for exercise in exercises {
            let columns = grid.columns.filter { $0.exercise == exercise }
            let started = grid.students.filter { grid.started($0, exercise) }
            let done = grid.students.filter { grid.isDone($0, exercise) }
            let folded = section.add("details", ["class": "exercise", "id": "exercise-\(exercise)", "data-exercise": exercise])
            if current.contains(exercise) { folded.set("open", "open") }
            let summary = folded.add("summary")
            summary.add("strong", text: "\(columns[0].number) \(exercise.drop { $0 != "-" }.dropFirst())")
            summary.append(" · \(columns.count) checks, \(columns.filter(\.baseline).count) of them baselines · started by \(started.count) of \(grid.students.count) · done by \(done.count)")
            // The students who ran it, not the whole class: on a projector every row counts.
            let ran = grid.students.filter { student in columns.contains { grid.standing(student, $0) != .notRun } }
            guard !ran.isEmpty else {
                folded.add("p", ["class": "note"], text: "Nobody has run its checks yet.")
                continue
            }
            writeTable(of: columns, for: ran, in: folded)
        }
    }

    /// The exercises the class is on: for each student, every exercise of their latest changed
    /// code that is not done yet (a `check --all` sends several at one moment), or the last of
    /// them when all are done. With none changed yet, the first exercise anyone submitted.
    private var currentExercises: Set<String> {
        var latest: [String: String] = [:]
        for cell in grid.cells where cell.attempted { latest[cell.student] = max(latest[cell.student] ?? "", cell.submittedAt) }
        var current = Set<String>()
        for (student, moment) in latest {
            let touched = Set(grid.cells.filter { $0.student == student && $0.attempted && $0.submittedAt == moment }.map(\.exercise))
            let open = touched.filter { !grid.isDone(student, $0) }
            current.formUnion(open.isEmpty ? touched.max().map { [$0] } ?? [] : open)
        }
        if !current.isEmpty { return current }
        return Set(grid.columns.first { column in grid.cells.contains { $0.exercise == column.exercise } }.map { [$0.exercise] } ?? [])
    }

    private func writeTable(of columns: [ClassGrid.Column], for students: [String], in parent: Element) {
        let table = parent.add("table", ["class": "grid"])
        let head = table.add("thead").add("tr", ["class": "checks"])
        head.add("th", ["scope": "col", "class": "student"], text: "Student")
        head.add("th", ["scope": "col", "class": "last"], text: "Last")
        for column in columns {
            let label = head.add("th", ["scope": "col", "class": "check", "data-check": "\(column.exercise)/\(column.check)"]).add("span")
            // A long name breaks after a hyphen, not inside a word.
            let parts = column.check.split(separator: "-", omittingEmptySubsequences: false)
            for (index, part) in parts.enumerated() {
                label.append(String(part) + (index < parts.count - 1 ? "-" : ""))
                if index < parts.count - 1 { label.add("wbr") }
            }
        }
        let body = table.add("tbody")
        for student in students {
            let row = body.add("tr", ["data-student": student])
            row.add("th", ["scope": "row", "class": "student", "title": student], text: student)
            let latest = grid.latestSubmission[student]
            row.add("td", ["class": "last"]).add("time", ["datetime": latest ?? ""], text: latest.map(time) ?? "")
            for column in columns {
                let standing = grid.standing(student, column)
                let cell = row.add("td", ["class": Self.style(standing), "data-check": "\(column.exercise)/\(column.check)",
                                          "data-standing": standing.rawValue])
                cell.add("span", ["class": "mark"], text: Self.mark(standing))
                if let result = grid.cell(student, column) {
                    cell.set("title", "\(column.number) \(column.check): \(standing.rawValue). \(result.detail.shortened(to: Self.shownDetail)) (\(time(result.submittedAt)))")
                    cell.set("data-submitted", result.submittedAt)
                }
            }
        }
        let rates = table.add("tfoot").add("tr", ["class": "pass-rate"])
        rates.add("th", ["scope": "row", "colspan": "2"], text: "fixed by")
        for column in columns {
            if column.baseline {
                rates.add("td", ["data-check": "\(column.exercise)/\(column.check)", "class": "baseline",
                                 "title": "a baseline: the starting code passes it too, so it counts for nothing"], text: "baseline")
                continue
            }
            let (fixed, ran) = passRate(column)
            let cell = rates.add("td", ["data-check": "\(column.exercise)/\(column.check)", "data-fixed": String(fixed),
                                        "data-ran": String(ran), "title": "\(fixed) of \(ran) students who changed the code and ran it"])
            cell.append(ran == 0 ? "–" : "\(fixed)/\(ran)")
        }
    }

    /// Students whose latest run of the check held, of those whose latest run ran it on code
    /// they had changed: a student who has not started is not one who failed.
    private func passRate(_ column: ClassGrid.Column) -> (fixed: Int, ran: Int) {
        let standings: [Standing] = grid.students.map { grid.standing($0, column) }.filter { $0 != .notRun && $0 != .notStarted }
        return (standings.filter { $0 == Standing.fixed }.count, standings.count)
    }

    /// The checks most of the class still fails, worst first, each with who and why.
    private func writeStuck(_ main: Element) {
        let section = main.add("section", ["id": "stuck"])
        section.add("h2", text: "Where the class is stuck")
        // Only students who changed the code are stuck on a check: the rest have not started.
        let rates: [(column: ClassGrid.Column, fixed: Int, ran: Int)] = grid.countedColumns.map { column in
            let tried = grid.students.map { grid.standing($0, column) }.filter { $0 != .notRun && $0 != .notStarted }
            return (column, tried.filter { $0 == .fixed }.count, tried.count)
        }
        let stuck = rates.filter { $0.ran > $0.fixed }.sorted { left, right in
            Double(left.fixed) / Double(left.ran) < Double(right.fixed) / Double(right.ran)
        }
        guard !stuck.isEmpty else {
            section.add("p", ["class": "note"], text: grid.students.isEmpty ? "Nothing submitted yet." : "Every check that ran holds.")
            return
        }
        for (column, fixed, ran) in stuck {
            let details = section.add("details", ["data-check": "\(column.exercise)/\(column.check)"])
            details.add("summary", text: "\(column.number) \(column.check): \(ran - fixed) of \(ran) not fixed")
            let list = details.add("ul")
            for student in grid.students {
                let standing = grid.standing(student, column)
                guard standing == .failing || standing == .doesNotCompile, let cell = grid.cell(student, column) else { continue }
                let item = list.add("li")
                item.add("span", ["class": "name"], text: student)
                item.append(" (\(standing.rawValue), \(time(cell.submittedAt))): \(cell.detail.shortened(to: Self.shownDetail))")
                if let run = cell.run { drawRun(run, of: student, into: item) }
            }
        }
    }

    /// The student's run under the check, as the report draws a run: folded, for the teacher to open.
    private func drawRun(_ run: ComparisonResults.ExchangeTimeline, of student: String, into item: Element) {
        let picture = item.add("details", ["class": "run"])
        picture.add("summary", text: "the run")
        let size = run.sizeBytes ?? run.disk.map(\.bytes).max() ?? 0
        let chart = ExchangeChart(lanes: [.init(title: "\(student)'s code", timeline: run, sizeBytes: size)])
        let svg = picture.add("svg", ["xmlns": "http://www.w3.org/2000/svg", "class": "run-picture",
                                      "viewBox": "0 0 \(Int(ChartFrame.width)) \(Int(chart.height.rounded(.up)))",
                                      "role": "img", "aria-label": "the exchanges of \(student)'s run"])
        chart.draw(in: svg)
    }

    /// Each name is held by the copy of the lab that first submitted under it; a button lets the
    /// next copy hold it instead (a student whose copy was lost), keeping what was submitted.
    private func writeNames(_ main: Element) {
        guard let releasePath, !grid.students.isEmpty else { return }
        let section = main.add("details", ["id": "names"])
        section.add("summary", text: "Names: each held by the copy of the lab that first submitted under it")
        let list = section.add("ul")
        for student in grid.students {
            let form = list.add("li").add("form", ["method": "post", "action": releasePath])
            form.add("span", ["class": "name"], text: student)
            form.append(" ")
            form.add("input", ["type": "hidden", "name": "name", "value": student])
            form.add("button", ["type": "submit"], text: "release")
        }
    }

    /// How much of a check's detail the page shows, twice per cell at most: the page of a full class
    /// stays a few megabytes whatever the details say. The exports keep them whole.
    static let shownDetail = 160

    private func writeComparison(_ main: Element) {
        let section = main.add("section", ["id": "comparison"])
        section.add("h2", text: "The class's machines")
        ClassComparison(grid.comparisons.map { comparison in
            var results = comparison.results
            results.label = comparison.student
            return results
        }).write(into: section)
    }

    /// Polls the page's submission count every two seconds and, when it changes, swaps in the
    /// fresh page's `<main>`: parsed as a document, never run, so nothing in it can act.
    public static let liveScript = """
        // Download Lab class page: refresh the grid while the class works.
        (() => {
          const page = location.pathname.replace(/\\/$/, "");
          let seen = document.body.dataset.submissions;
          const live = () => document.getElementById("live");
          // The exercises the teacher opened or folded stay so across refreshes.
          const chosen = new Map();
          document.addEventListener("toggle", (event) => {
            if (event.target.id) chosen.set(event.target.id, event.target.open);
          }, true);
          async function poll() {
            try {
              const count = await fetch(page + "/count", { cache: "no-store" });
              if (count.ok) {
                const now = (await count.text()).trim();
                if (now !== seen) {
                  const fresh = await fetch(page, { cache: "no-store" });
                  if (fresh.ok) {
                    const next = new DOMParser().parseFromString(await fresh.text(), "text/html");
                    const main = next.querySelector("main");
                    if (main) {
                      for (const [id, open] of chosen) {
                        const folded = main.querySelector("#" + CSS.escape(id));
                        if (folded) folded.open = open;
                      }
                      document.querySelector("main").replaceWith(document.adoptNode(main));
                      seen = next.body.dataset.submissions;
                    }
                  }
                }
                if (live()) live().textContent = " · updates by itself";
              }
            } catch (error) {
              if (live()) live().textContent = " · cannot reach the server; retrying";
            }
            setTimeout(poll, 2000);
          }
          if (live()) live().textContent = " · updates by itself";
          setTimeout(poll, 2000);
        })();
        """
}
