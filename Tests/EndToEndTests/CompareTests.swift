import Foundation
import LabCatalogue
import LabFixtures
import LabKit
import LabReport
import LabServer
import LabVocabulary
import Testing

/// `lab compare --quick`, run for real: every lesson executable as a child process against the
/// embedded server. One run (about 20 s) is shared by the tests that read its results. It runs
/// with a `dd` first on PATH that refuses `conv=fdatasync`, as Apple's does: nothing the lab
/// measures may depend on a system tool whose options differ between GNU and Apple's systems.
@Suite(.serialized)
struct CompareTests {
    private func quick() throws -> QuickRun {
        let run = try Self.quickRun.get()
        try #require(run.finished.status == 0, "\(run.finished.stderr)")
        return run
    }

    private func clean(_ results: ComparisonResults, _ lesson: LessonID, size: Int64) -> [ComparisonResults.Run] {
        results.runs.filter { $0.lesson == lesson.rawValue && $0.scenario == .clean && $0.sizeBytes == size }
    }

    private func run(_ results: ComparisonResults, _ lesson: LessonID, _ variant: Variant,
                     _ scenario: Scenario) throws -> ComparisonResults.Run {
        try results.run(lesson, variant, scenario)
    }

    @Test func printsTheReportPathAndWritesBothFiles() throws {
        let run = try quick()
        let report = run.folder.appendingPathComponent("report.html")
        #expect(run.finished.stdout == report.path + "\n")
        #expect(FileManager.default.fileExists(atPath: report.path))
        // Progress goes to stderr as it happens, one line per run.
        let progressLines = run.finished.stderr.split(separator: "\n").filter { $0.hasPrefix("[") }
        #expect(progressLines.count == run.results.runs.count)
    }

    @Test func coversTheQuickPlan() throws {
        let results = try quick().results
        #expect(results.label == "quick-test")
        #expect(results.settings.preset == .quick)
        #expect(results.settings.sizes == [1 << 20, 32 << 20])
        #expect(results.settings.scenarios == [.clean, .dropResume, .ignoreRange])
        #expect(results.environment.serverKind == .embedded)
        #expect(results.environment.cores == ProcessInfo.processInfo.activeProcessorCount)
        // Every lesson × 2 variants × 2 sizes clean, then the downloading lessons × 2 variants × 2 fault scenarios.
        #expect(results.runs.count == LessonID.allCases.count * 2 * 2 + LessonID.allCases.filter { !$0.uploads }.count * 2 * 2)
        #expect(results.runs.allSatisfy { $0.repetitions.count == 1 })
        let kinds = Set(results.references.map(\.kind))
        #expect(kinds.isSuperset(of: [.curl, .foundationFloor, .formUpload, .loopbackLimit, .diskLimit]), "\(kinds)")
    }

    /// The yardsticks for the lab's own cost: Foundation's floor and curl -F at every clean
    /// size, each run's own clock and verification time, and the report's table of ratios.
    @Test func measuresTheLabsOwnCostAgainstTheBareTransfer() throws {
        let run = try quick()
        let results = run.results
        for size in results.settings.sizes {
            for kind in [ReferenceKind.foundationFloor, .formUpload] {
                let reference = try #require(results.references.first { $0.kind == kind && $0.sizeBytes == size }, "\(kind) at \(size)")
                #expect(reference.wallSeconds > 0 && reference.peakRSSBytes ?? 0 > 1 << 20, "\(kind) at \(size)")
            }
        }
        let passedClean = results.runs.filter { $0.scenario == .clean && $0.status == .pass }
        for lessonRun in passedClean {
            let uploads = lessonRun.lesson == LessonID.multipartUpload.rawValue
            // Lesson 11's runs are paced per connection: a floor at full speed would measure something else.
            let paced = LessonID(rawValue: lessonRun.lesson)?.fetchesInSegments == true
            if lessonRun.variant == .corrected, !paced {
                // Paired: a reference run right before each repetition, and the ratio of each pair.
                #expect(lessonRun.reference == (uploads ? .formUpload : .foundationFloor))
                #expect(lessonRun.repetitions.allSatisfy { ($0.referenceSeconds ?? 0) > 0 }, "\(lessonRun.lesson)")
                let ratios = lessonRun.repetitions.map { $0.transferSeconds! / $0.referenceSeconds! }
                #expect(lessonRun.costRatio == ratios.sorted()[ratios.count / 2], "\(lessonRun.lesson)")
            } else {
                #expect(lessonRun.reference == nil && lessonRun.costRatio == nil)
            }
            let transfer = try #require(lessonRun.transferSeconds, "\(lessonRun.lesson) \(lessonRun.variant)")
            let verification = try #require(lessonRun.verificationSeconds, "\(lessonRun.lesson) \(lessonRun.variant)")
            // The lesson's clock sits inside its process: start-up and verification are outside it.
            #expect(transfer > 0 && transfer + verification < lessonRun.wallSeconds, "\(lessonRun.lesson) \(lessonRun.variant)")
            #expect(uploads ? verification == 0 : verification > 0, "\(lessonRun.lesson) \(lessonRun.variant)")
        }
        // The report has a ratio for every corrected lesson that passed clean, at each size, but
        // lesson 11's, which is paced.
        let html = try String(contentsOf: run.folder.appendingPathComponent("report.html"), encoding: .utf8)
        let ratios = html.matches(of: /data-ratio="/).count
        let paired = passedClean.filter { $0.variant == .corrected && LessonID(rawValue: $0.lesson)?.fetchesInSegments != true }
        #expect(ratios == paired.count && ratios >= 16)
        #expect(html.contains("data-build=\"debug\""))
    }

    /// The quick plan's failures are exactly the article cells the catalogue names, each one
    /// marked expected: nothing fails by chance, and nothing the catalogue predicts passes.
    @Test func failuresAreExactlyTheArticleCellsTheCatalogueNames() throws {
        let results = try quick().results
        let failed = results.runs.filter { $0.status == .fail }
        var predicted: Set<String> = []
        for lesson in Catalogue.lessons {
            for scenario in lesson.failingScenarios where results.settings.scenarios.contains(scenario) {
                predicted.insert("\(lesson.id.rawValue) article \(scenario.rawValue)")
            }
        }
        #expect(Set(failed.map { "\($0.lesson) \($0.variant) \($0.scenario)" }) == predicted)
        for run in failed { #expect(run.expectedFailure, "\(run.lesson) \(run.scenario): \(run.cause ?? "")") }
    }

    /// Lesson 11 beside aria2c and curl over 1, 2, 4 and 8 paced connections: every run fetched
    /// the right file (the comparison stops otherwise), lesson 11 fetched each byte once, and the
    /// report draws a point per run and says where more connections stop helping.
    @Test func connectionsAreComparedWithAria2cAndCurl() throws {
        let run = try quick()
        let runs = try #require(run.results.connections)
        let programs = ConnectionsProgram.allCases.filter { $0 != .aria2c || runningInCI || executable(named: "aria2c") != nil }
        let servers = ConnectionsServer.allCases.filter { $0 != .nginx || runningInCI || executable(named: "nginx") != nil }
        #expect(Set(runs.map(\.server)) == Set(servers))
        for server in servers {
            let from = runs.filter { $0.server == server }
            #expect(Set(from.map(\.program)) == Set(programs), "\(server)")
            for program in programs {
                #expect(from.filter { $0.program == program }.map(\.connections) == (program.splits ? [1, 2, 4, 8] : [1]), "\(server) \(program)")
            }
        }
        #expect(runs.allSatisfy { $0.sizeBytes == 8 << 20 && $0.paceBytesPerSecond == 16 << 20 && $0.wallSeconds > 0 })
        // The lab server counts what it sent: lesson 11 fetched each byte once; nginx's count is not read.
        #expect(runs.filter { $0.program == .lesson && $0.server == .lab }.allSatisfy { $0.fetchedTwiceBytes == 0 })
        #expect(runs.filter { $0.server == .nginx }.allSatisfy { $0.fetchedTwiceBytes == nil })
        let html = try String(contentsOf: run.folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("<section id=\"connections\">") && html.contains("data-chart=\"connections-lab-server\""))
        #expect(html.matches(of: /<circle [^>]*data-connections="/).count == runs.count)
        #expect(html.contains("At 4 connections lesson 11 fetched "))
    }

    @Test func inMemoryLessonNeedsMoreMemoryThanEveryStreamingLesson() throws {
        let results = try quick().results
        let largest = try #require(results.settings.sizes.max())
        let inMemory = clean(results, .inMemory, size: largest)
        let streaming = [LessonID.fileHandle, .outputStream, .sessionDataTask, .downloadTaskResume, .runLoopThread]
            .flatMap { clean(results, $0, size: largest) }
        try #require(inMemory.count == 2 && streaming.count == 10)
        let lowestInMemory = try #require(inMemory.map(\.peakRSSBytes).min())
        let highestStreaming = try #require(streaming.map(\.peakRSSBytes).max())
        #expect(lowestInMemory > highestStreaming,
                "lesson 01 peaks at \(lowestInMemory) bytes, a streaming lesson at \(highestStreaming)")
    }

    @Test func fileHandleArticleFailsIgnoredRangeWhileCorrectedPasses() throws {
        let results = try quick().results
        let article = try run(results, .fileHandle, .article, .ignoreRange)
        let corrected = try run(results, .fileHandle, .corrected, .ignoreRange)
        #expect(article.status == .fail)
        #expect(article.expectedFailure)
        // The whole file appended after the 30% already there.
        let size = results.settings.faultSize
        #expect(article.cause == "file has \(grouped(size + size * 3 / 10)) bytes, expected \(grouped(size))",
                "\(article.cause ?? "no cause")")
        #expect(corrected.status == .pass)
        #expect(corrected.cause == nil)
        #expect(!corrected.expectedFailure)
    }

    @Test(arguments: [LessonID.fileHandle, .outputStream, .sessionDataTask, .downloadTaskResume, .runLoopThread])
    func correctedResumableLessonPassesDropAndResume(lesson: LessonID) throws {
        let results = try quick().results
        let corrected = try run(results, lesson, .corrected, .dropResume)
        #expect(corrected.status == .pass, "\(corrected.cause ?? "")")
        #expect(corrected.repetitions.allSatisfy { $0.verified })
        // The server's log: at least the whole file.
        #expect(corrected.bytesOnWire >= results.settings.faultSize)
    }

    @Test func resumingLessonsFetchOnlyTheRestWhileInMemoryOnesStartOver() throws {
        let results = try quick().results
        let size = results.settings.faultSize
        for lesson in [LessonID.fileHandle, .outputStream, .sessionDataTask, .runLoopThread] {
            let corrected = try run(results, lesson, .corrected, .dropResume)
            #expect(corrected.bytesDownloadedAgain == 0, "\(lesson)")
            #expect(corrected.bytesOnWire == size, "\(lesson)")
        }
        // Lesson 01 holds the bytes in memory: after the drop it fetches them all again.
        let inMemory = try run(results, .inMemory, .corrected, .dropResume)
        #expect(inMemory.status == .pass)
        #expect(inMemory.bytesDownloadedAgain == size * 3 / 10)
    }

    /// The report's picture of lessons 02 and 03 under ignore-range, read in Chromium: the
    /// article's second GET is a 200 appended after the partial file, the corrected one's a 200
    /// written from byte 0, each a bar with its label.
    @Test(.enabled(if: runningInCI || executable(named: "chromium-headless-shell") != nil,
                   "chromium-headless-shell is not installed; the browser test is skipped (apt-get install chromium-headless-shell)"))
    func theReportDrawsTheSplicedAndTheRestartedResume() throws {
        let report = try quick().folder.appendingPathComponent("report.html")
        let results = try Browser.run(report.absoluteString, steps: [["eval": """
            [...document.querySelectorAll('figure.exchanges')].filter(f => ['02-filehandle', '03-outputstream'].includes(f.dataset.lesson))
              .map(f => ({lesson: f.dataset.lesson, scenario: f.dataset.scenario, lanes: [...f.querySelectorAll('g.lane')].map(lane => ({
                title: lane.dataset.lane,
                gets: [...lane.querySelectorAll('g.exchange[data-method="GET"]')].map(g => ({
                  status: g.dataset.status, label: g.querySelector('.bar-label').textContent,
                  note: g.querySelector('.bar-note')?.textContent ?? '', width: g.querySelector('rect.body')?.getBoundingClientRect().width ?? 0 }))
              }))}))
            """]], scripts: false)
        let figures = try #require(results.first as? [[String: Any]])
        #expect(figures.compactMap { $0["lesson"] as? String } == ["02-filehandle", "03-outputstream"], "\(figures)")
        for figure in figures {
            #expect(figure["scenario"] as? String == "ignore-range")
            let lanes = figure["lanes"] as? [[String: Any]] ?? []
            #expect(lanes.count == 2, "\(figure)")
            for lane in lanes {
                let title = lane["title"] as? String ?? ""
                let gets = lane["gets"] as? [[String: Any]] ?? []
                let resume = try #require(gets.last, "\(lane)")
                #expect(gets.count == 2 && gets.allSatisfy { ($0["width"] as? Double ?? 0) >= 1 }, "\(lane)")
                #expect(resume["status"] as? String == "200" && (resume["label"] as? String ?? "").hasPrefix("GET 200"), "\(resume)")
                #expect((resume["label"] as? String ?? "").contains("fault: ignore-range"), "\(resume)")
                let note = resume["note"] as? String ?? ""
                if title.hasPrefix("article") {
                    #expect(note.hasPrefix("appended after"), "\(figure["lesson"] ?? "") article: \(resume)")
                } else {
                    #expect(title.hasPrefix("corrected") && note == "written from byte 0", "\(figure["lesson"] ?? "") \(title): \(resume)")
                }
            }
        }
    }

    /// A HAR file per case, each HAR 1.2, and the pictured cases' exchanges in them.
    @Test(.enabled(if: runningInCI || harCanBeChecked, harCheckNeeds))
    func writesAHARFilePerRun() throws {
        let run = try quick()
        let folder = run.folder.appendingPathComponent("har")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil).sorted { $0.path < $1.path }
        #expect(files.count == run.results.runs.count)
        let entries = try HARTests.check(files)
        for pictured in run.results.runs where pictured.exchangeTimeline != nil {
            let name = "\(pictured.lesson)-\(pictured.variant.rawValue)-\(pictured.scenario.rawValue)-\(ByteSize.format(pictured.sizeBytes)).har"
            let index = try #require(files.firstIndex { $0.lastPathComponent == name }, "\(name)")
            #expect(entries[index].count == pictured.exchangeTimeline?.exchanges.count, "\(name)")
        }
    }

    /// `lab pages` writes each lesson's picture beside the pages, as a well-formed SVG file, and the
    /// page's measured section links it.
    @Test func pagesLinkThePicturesWrittenBesideThem() throws {
        let run = try quick()
        let pages = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: pages) }
        for lesson in LessonID.allCases {
            try FileManager.default.copyItem(at: ExerciseTests.packageRoot.appendingPathComponent("Lessons/\(lesson.rawValue).md"),
                                             to: pages.appendingPathComponent("\(lesson.rawValue).md"))
        }
        let finished = try ChildProcess.run("lab", ["pages", run.folder.appendingPathComponent("results.json").path, "--lessons", pages.path])
        #expect(finished.status == 0, "\(finished.stderr)")
        for lesson in LessonID.allCases {
            let picture = pages.appendingPathComponent("pictures/\(lesson.rawValue).svg")
            let page = try String(contentsOf: pages.appendingPathComponent("\(lesson.rawValue).md"), encoding: .utf8)
            #expect(page.contains("](pictures/\(lesson.rawValue).svg)"), "\(lesson)")
            let checked = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["xmllint", "--noout", picture.path])
            #expect(checked.status == 0, "\(lesson): \(checked.stderr)")
            let svg = try String(contentsOf: picture, encoding: .utf8)
            #expect(svg.contains("<svg xmlns=\"http://www.w3.org/2000/svg\"") && svg.contains("class=\"lane\""), "\(lesson)")
        }
    }

    @Test func measuresEveryProcessFromTheOutside() throws {
        let results = try quick().results
        for run in results.runs {
            for repetition in run.repetitions {
                #expect(repetition.peakRSSBytes > 4 << 20, "\(run.lesson) \(run.variant)")
                #expect(repetition.wallSeconds > 0 && repetition.cpuSeconds > 0)
            }
        }
        // Clean runs carry a memory timeline sampled at 20 Hz or more.
        for run in results.runs where run.scenario == .clean && run.sizeBytes == 32 << 20 {
            let timeline = try #require(run.rssTimeline, "\(run.lesson) \(run.variant)")
            #expect(timeline.count >= 2, "\(run.lesson) \(run.variant)")
            let gaps = zip(timeline.dropFirst(), timeline).map { $0.t - $1.t }.sorted()
            if !gaps.isEmpty { #expect(gaps[gaps.count / 2] <= 0.05, "\(run.lesson) \(run.variant)") }
        }
        #expect(results.runs.filter { $0.scenario != .clean }.allSatisfy { $0.rssTimeline == nil })
    }

    @Test func theUploadArticleFailsAsExpected() throws {
        let results = try quick().results
        let article = try #require(clean(results, .multipartUpload, size: 1 << 20).first { $0.variant == .article })
        #expect(article.status == .fail)
        #expect(article.expectedFailure)
        #expect(article.cause?.contains("1,048,578 bytes") == true, "\(article.cause ?? "")")
        // On the wire: the whole multipart body as the server read it, the file plus a few
        // hundred bytes of delimiters and headers.
        for run in clean(results, .multipartUpload, size: 1 << 20) {
            #expect(run.bytesOnWire > 1 << 20 && run.bytesOnWire < (1 << 20) + 4096, "\(run.variant) \(run.bytesOnWire)")
            #expect(run.throughputBytesPerSecond > 0)
        }
    }

    /// Every field in results.json is in docs/results-schema.md's table with the same type, and
    /// every field the table lists as always present is there.
    @Test func resultsFileHasTheDocumentedShape() throws {
        let run = try quick()
        let data = try Data(contentsOf: run.folder.appendingPathComponent("results.json"))
        var found: [String: Set<String>] = [:]
        Self.collectTypes(try JSONSerialization.jsonObject(with: data), path: "", into: &found)

        let documented = try Self.documentedFields()
        try #require(documented.count > 40, "the results.json table in docs/results-schema.md was not found")
        for (path, types) in found.sorted(by: { $0.key < $1.key }) {
            let entry = try #require(documented[path], "\(path) is in results.json but not in docs/results-schema.md")
            #expect(types.allSatisfy { entry.type == $0 || (entry.type == "number" && $0 == "integer") },
                    "\(path): docs/results-schema.md says \(entry.type), results.json has \(types.sorted())")
        }
        for (path, entry) in documented where !entry.optional {
            #expect(found[path] != nil, "\(path) is documented as always present but is missing")
        }
    }

    /// `runs[].repetitions[].exitCode` → {"integer"}.
    static func collectTypes(_ value: Any, path: String, into found: inout [String: Set<String>]) {
        if let object = value as? [String: Any] {
            // An array's elements are described by their fields, not by a row of their own.
            if !path.isEmpty && !path.hasSuffix("[]") { found[path, default: []].insert("object") }
            for (key, child) in object {
                collectTypes(child, path: path.isEmpty ? key : "\(path).\(key)", into: &found)
            }
        } else if let array = value as? [Any] {
            found[path, default: []].insert("array")
            for element in array where element is [String: Any] {
                collectTypes(element, path: path + "[]", into: &found)
            }
        } else if let number = value as? NSNumber {
            // JSONSerialization keeps how the number was written: "c" true/false, "d" with a
            // fraction or exponent, an integer type otherwise.
            let type = switch String(cString: number.objCType) {
            case "c": "boolean"
            case "d", "f": "number"
            default: "integer"
            }
            found[path, default: []].insert(type)
        } else if value is String {
            found[path, default: []].insert("string")
        }
    }

    /// The table in docs/results-schema.md: "| `runs[].cause` | string, optional | … |".
    static func documentedFields() throws -> [String: (type: String, optional: Bool)] {
        let schema = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/results-schema.md")
        let text = try String(contentsOf: schema, encoding: .utf8)
        guard let start = text.range(of: "### `results.json`") else { return [:] }
        var fields: [String: (type: String, optional: Bool)] = [:]
        for line in text[start.upperBound...].split(separator: "\n") {
            if line.hasPrefix("#") { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 4, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { continue }
            let path = String(cells[1].dropFirst().dropLast())
            let type = cells[2].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            fields[path] = (type[0], type.dropFirst().contains("optional"))
        }
        return fields
    }

    private func grouped(_ value: Int64) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.locale = Locale(identifier: "en_US")
        return formatter.string(from: NSNumber(value: value))!
    }
}

/// The scenarios `--quick` leaves out, for the lessons where they tell most.
struct CompareKillAndChangeTests {
    static let size: Int64 = 16 << 20

    @Test func killedLessonsResumeOrStartOverAndChangedFilesAreCaught() throws {
        let results = try compareResults(["--lessons", "01,02,03,05", "--scenarios", "kill-rerun,entity-changed",
                                          "--fault-size", "16MiB", "--repetitions", "1"]).results
        let run = results.run
        let breakPoint = Self.size * 3 / 10

        // Killed at 30%: the partial file is resumed and nothing is fetched twice...
        let streaming = try run(.outputStream, .corrected, .killRerun)
        #expect(streaming.status == .pass)
        #expect(streaming.bytesDownloadedAgain == 0)
        // Killed at the stall, not rescued by URLSession's 60 s timeout and a retry.
        #expect(streaming.wallSeconds < 30)
        // ...while a buffer in memory dies with the process, and its 30% comes again.
        let inMemory = try run(.inMemory, .corrected, .killRerun)
        #expect(inMemory.status == .pass)
        #expect(inMemory.bytesDownloadedAgain == breakPoint)
        // The article's FileHandle appends the whole file to the partial one.
        let appended = try run(.fileHandle, .article, .killRerun)
        #expect(appended.status == .fail)
        #expect(appended.cause == "file has \(ByteFormat.grouped(Self.size + breakPoint)) bytes, expected \(ByteFormat.grouped(Self.size))")
        // Lesson 05 survives a kill either way. How much it fetches again also depends on when
        // its own Pause lands, so the resume data's worth is checked by Lesson05Tests instead.
        for variant in Variant.allCases {
            #expect(try run(.downloadTaskResume, variant, .killRerun).status == .pass)
        }

        // The file changed between attempts: If-Range brings the whole new file; the article
        // splices old bytes with new ones, and lab compare's own digest check catches it.
        let checked = try run(.outputStream, .corrected, .entityChanged)
        #expect(checked.status == .pass)
        let spliced = try run(.outputStream, .article, .entityChanged)
        #expect(spliced.status == .fail)
        #expect(spliced.expectedFailure)
        #expect(spliced.cause == "right size, wrong bytes (SHA-256 differs)")
    }

    /// Peak memory comes from the kernel for the child alone: curl peaks far below the
    /// 40 MB or so that `lab compare` itself holds, which spawning it directly would report.
    @Test func referencePeakMemoryIsTheClientsOwn() throws {
        let folder = try scratchDirectory()
        let finished = try ChildProcess.run("lab", [
            "compare", "--lessons", "03", "--variants", "corrected", "--scenarios", "clean",
            "--sizes", "1MiB", "--repetitions", "1", "-o", folder.path,
        ])
        try #require(finished.status == 0, "\(finished.stderr)")
        let results = try ComparisonResults.read(from: folder.appendingPathComponent("results.json"))
        let curl = try #require(results.references.first { $0.kind == .curl })
        let peak = try #require(curl.peakRSSBytes)
        #expect(peak > 1 << 20 && peak < 24 << 20, "curl peaked at \(peak) bytes")
        #expect(results.runs.count == 1)
        #expect(results.settings.preset == .custom)
    }
}

/// Bad input to `lab compare` is one line on stderr and exit 64, before anything runs.
struct CompareUsageTests {
    @Test(arguments: [
        (["--sizes", "12XB"], "lab compare: The value '12XB' is invalid for '--sizes <sizes>': "),
        (["--lessons", "42"], "lab compare: The value '42' is invalid for '--lessons <lessons>': no lesson \"42\"; there are "
            + LessonID.allCases.map(\.rawValue).joined(separator: ", ") + "\n"),
        (["--lessons", "03,exercise-03-outputstream"], "lab compare: The value '03,exercise-03-outputstream' is invalid for '--lessons <lessons>': no lesson \"exercise-03-outputstream\"; there are "),
        (["--scenarios", "flood"], "lab compare: The value 'flood' is invalid for '--scenarios <scenarios>': no scenario \"flood\"; there are clean, drop-resume, kill-rerun, ignore-range, entity-changed, slow-disk, crowded, relaunch, relaunch-changed\n"),
        (["--server", "ftp://example.com"], "lab compare: --server must be an http:// or https:// URL with a host, got \"ftp://example.com\"\n"),
        (["--server", "http://127.0.0.1:9", "--scenarios", "drop-resume"], "lab compare: --scenarios: drop-resume needs the embedded server's faults; with --server only clean, slow-disk, crowded and relaunch run\n"),
        (["--variants", "article,fixed"], "lab compare: The value 'article,fixed' is invalid for '--variants <variants>': no variant \"fixed\"; there are article, corrected\n"),
        (["--lessons", " , "], "lab compare: The value ' , ' is invalid for '--lessons <lessons>': give at least one\n"),
        (["--quick", "--full"], "lab compare: --quick and --full are alternatives; pick one\n"),
        (["--repetitions", "0"], "lab compare: --repetitions must be between 1 and 20\n"),
        (["--sizes", "1KiB"], "lab compare: The value '1KiB' is invalid for '--sizes <sizes>': 1KiB is outside 64KiB…8GiB\n"),
        (["--lessons", "07", "--scenarios", "kill-rerun"], "lab compare: nothing to run: lesson 07 runs only in the clean scenario\n"),
        (["--label", ""], "lab compare: --label cannot be empty: it names the machine in the report\n"),
        (["--connections-size", "4MiB"], "lab compare: The value '4MiB' is invalid for '--connections-size <connections-size>': 4MiB is outside 8MiB…8GiB: 8 connections each need a range\n"),
        (["--connections-size", "-5"], "lab compare: The value '-5' is invalid for '--connections-size <connections-size>': bad size \"-5\": expected a byte count like 1000, 64KiB, 64MiB, 1GiB or 5MB\n"),
        (["--lessons", "3,03,lesson-03-outputstream"], "lab compare: --lessons names 03-outputstream more than once\n"),
        (["--profile", "3g,3g"], "lab compare: --profile names 3g more than once\n"),
        (["-o", ""], "lab compare: -o needs the path of a folder\n"),
        (["--lessons", "03", "--connections-size", "1GiB"], "lab compare: --connections-size: the connections comparison runs only on the embedded server, "
            + "with lesson 11's corrected variant in the clean scenario\n"),
    ])
    func refusesBadInput(arguments: [String], message: String) throws {
        let finished = try ChildProcess.run("lab", ["compare"] + arguments)
        #expect(finished.status == 64)
        #expect(finished.stdout.isEmpty)
        if message.hasSuffix("\n") {
            #expect(finished.stderr == message)
        } else {
            #expect(finished.stderr.hasPrefix(message), "\(finished.stderr)")
            #expect(finished.stderr.split(separator: "\n").count == 1, "\(finished.stderr)")
        }
    }
}
