/// `lab compare`: every lesson, side by side, measured from the outside.
///
/// Each lesson executable runs as a child process of its own, against a lab server inside this
/// process (or `--server`), in both variants, at several sizes and under several faults. The
/// kernel reports each child's peak memory and CPU time; `/proc` gives its memory over time; the
/// server's log gives the bytes it sent; the file's SHA-256 is checked here. curl, wget and the
/// loopback and disk limits are measured in the same run. Everything lands in `results.json`,
/// drawn as `report.html`.

import ArgumentParser
import Foundation
import LabCatalogue
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabHarness
import LabKit
import LabPlatform
import LabReport
import LabServer
import LabVocabulary

struct Compare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run every lesson as a child process, measure it, and write results.json and report.html.",
        discussion: """
            Scenarios:
            \(Scenario.allCases.map { "  \($0.rawValue.padding(toLength: 15, withPad: " ", startingAt: 0)) \($0.summary)" }.joined(separator: "\n"))

            Presets: the default is 1 MiB, 32 MiB and 128 MiB clean, 3 times each, and every scenario at 16 MiB, \
            once (about 3 minutes with a debug build on 2 cores). --quick: 1 and 32 MiB, drop-resume and \
            ignore-range at 8 MiB, once. --full: adds 256 MiB and 1 GiB, faults at 64 MiB, the relaunches, and \
            the 3g and wifi profiles (about 17 minutes).

            Network profiles (--profile): each corrected variant downloads a file sized for the link \
            (about 4 s of its bandwidth), clean and with a drop at 30%, once unless --repetitions says:
            \(NetworkProfile.allCases.map { "  \($0.summary), \(ByteFormat.iec($0.compareSize)) file" }.joined(separator: "\n"))
            """
    )

    @Flag(help: "A short run: small sizes, three scenarios, one repetition.")
    var quick = false

    @Flag(help: "A long run: up to 1 GiB.")
    var full = false

    @Option(help: "Clean-run sizes, comma-separated, e.g. 1MiB,32MiB,256MiB.", transform: { try CommaSeparated.list($0, ComparedSize.parse) })
    var sizes: [Int64]?

    @Option(help: "The size every fault scenario uses, e.g. 32MiB.", transform: ComparedSize.parse)
    var faultSize: Int64?

    @Option(parsing: .unconditional,
            help: "The file lesson 11, aria2c and curl fetch over 1, 2, 4 and 8 connections, e.g. 1GiB (at least 8MiB; default 16MiB, 8MiB with --quick, 1GiB with --full).",
            transform: ComparedSize.parseConnections)
    var connectionsSize: Int64?

    @Option(help: "Lessons, comma-separated: 3, 03, 03-outputstream or lesson-03-outputstream.",
            transform: { try CommaSeparated.list($0, LessonDefects.parse) })
    var lessons: [LessonDefects]?

    @Option(help: "Variants, comma-separated: \(CommaSeparated.all(Variant.self)).", transform: { try CommaSeparated.names($0, "variant") })
    var variants: [Variant]?

    @Option(help: "Scenarios, comma-separated (listed below).", transform: { try CommaSeparated.names($0, "scenario") })
    var scenarios: [Scenario]?

    @Option(help: "How often each clean run is repeated (and each run over a profile); the report shows medians.")
    var repetitions: Int?

    @Option(help: "How often each fault scenario's run is repeated (default 1: its cell is right or wrong, which one run shows).")
    var faultRepetitions: Int?

    @Option(name: .customLong("profile"), help: ArgumentHelp(
        "Also run the corrected variants over these network profiles, comma-separated (listed below).", valueName: "names"),
            transform: { try CommaSeparated.names($0, "profile") })
    var profiles: [[NetworkProfile]] = []

    @Option(help: "Run against this server instead of the embedded one (\(Self.scenariosWithoutFaults) only). It must serve /fixtures/compare-<bytes>.bin, as `lab serve` does.")
    var server: String?

    @Option(help: ArgumentHelp("Write the fixture files of the chosen sizes into DIR/fixtures/ and stop, for a server such as nginx to serve as --server.", valueName: "DIR"))
    var writeFixtures: String?

    @Flag(name: .customLong("update-pages"), help: "Also write the measured section of each lesson page in ./Lessons from this run (as `lab pages` does).")
    var updatePages = false

    @Option(help: "Who measured: a name for this machine in merged reports. Default: the hostname.")
    var label: String?

    @Option(name: [.customShort("o"), .long], help: "Folder for results.json and report.html. Default: lab-results/<date-time>.")
    var outputDir: String?

    @OptionGroup var classSubmission: ClassSubmitOptions

    mutating func validate() throws {
        if quick && full { throw ValidationError("--quick and --full are alternatives; pick one") }
        if let label { try Report.checkLabel(label) }
        if let repetitions, !(1...20).contains(repetitions) {
            throw ValidationError("--repetitions must be between 1 and 20")
        }
        if let faultRepetitions, !(1...20).contains(faultRepetitions) {
            throw ValidationError("--fault-repetitions must be between 1 and 20")
        }
        if outputDir?.isEmpty == true { throw ValidationError("-o needs the path of a folder") }
        try CommaSeparated.noneTwice(sizes ?? [], option: "--sizes") { ByteSize.format($0) }
        try CommaSeparated.noneTwice(lessons?.map(\.id) ?? [], option: "--lessons") { $0.rawValue }
        try CommaSeparated.noneTwice(variants ?? [], option: "--variants") { $0.rawValue }
        try CommaSeparated.noneTwice(scenarios ?? [], option: "--scenarios") { $0.rawValue }
        try CommaSeparated.noneTwice(Array(profiles.joined()), option: "--profile") { $0.rawValue }
        _ = try plan()
    }

    /// The preset, adjusted by the options given.
    func plan() throws -> ComparisonPlan {
        var plan = quick ? ComparisonPlan.quick : full ? .full : .defaultPlan
        let adjusted = sizes != nil || faultSize != nil || lessons != nil || variants != nil || scenarios != nil
            || repetitions != nil || faultRepetitions != nil || connectionsSize != nil
        if adjusted { plan.preset = .custom }
        if let sizes { plan.sizes = sizes.sorted() }
        if let faultSize { plan.faultSize = faultSize }
        if let lessons { plan.lessons = lessons }
        if let variants { plan.variants = variants }
        if let server {
            guard let url = URL(string: server), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                  url.host?.isEmpty == false
            else { throw ValidationError("--server must be an http:// or https:// URL with a host, got \"\(server)\"") }
            if scenarios == nil { plan.scenarios = plan.scenarios.filter { !$0.needsFaultInjection } }
        }
        if let scenarios {
            if server != nil, let needing = scenarios.first(where: \.needsFaultInjection) {
                throw ValidationError("--scenarios: \(needing) needs the embedded server's faults; with --server only \(Self.scenariosWithoutFaults) run")
            }
            plan.scenarios = scenarios
        }
        if scenarios == nil {
            // A scenario made for one lesson is left out when that lesson is not compared.
            plan.scenarios = plan.scenarios.filter { scenario in plan.lessons.contains { $0.runs(scenario) } }
        }
        if let repetitions { (plan.repetitions, plan.networkRepetitions) = (repetitions, repetitions) }
        if let faultRepetitions { plan.faultRepetitions = faultRepetitions }
        if let networks = try networks(for: plan) { plan.networks = networks }
        if let connectionsSize {
            guard server == nil, plan.connectionsSize != nil else {
                throw ValidationError("--connections-size: the connections comparison runs only on the embedded server, with lesson 11's corrected variant in the clean scenario")
            }
            plan.chosenConnectionsSize = connectionsSize
        }
        if plan.lessons.allSatisfy(\.id.uploads), plan.scenarios.allSatisfy({ $0 != .clean }) {
            throw ValidationError("nothing to run: lesson 07 runs only in the clean scenario")
        }
        return plan
    }

    /// The network profiles `--profile` names, in order and once each; none against another
    /// server; nil to keep the preset's.
    private func networks(for plan: ComparisonPlan) throws -> [NetworkProfile]? {
        guard !profiles.isEmpty else { return server != nil ? [] : nil }
        if server != nil { throw ValidationError("--profile needs the embedded server's faults; it does not run with --server") }
        let networks = profiles.joined().reduce(into: [NetworkProfile]()) { if !$0.contains($1) { $0.append($1) } }
        if !plan.variants.contains(.corrected) {
            throw ValidationError("--profile runs the corrected variants, and --variants leaves none")
        }
        if plan.lessons.allSatisfy(\.id.uploads) {
            throw ValidationError("--profile runs downloads, and lesson 07 uploads")
        }
        return networks
    }

    /// "clean, slow-disk, crowded and relaunch": what runs against another server.
    static var scenariosWithoutFaults: String {
        let names = Scenario.allCases.filter { !$0.needsFaultInjection }.map(\.rawValue)
        return names.count < 2 ? names.joined() : names.dropLast().joined(separator: ", ") + " and " + names.last!
    }

    func run() throws {
        let plan = try plan()
        if let writeFixtures {
            return try Self.writeFixtureFiles(sizes: Set(plan.sizes + [plan.faultSize]).sorted(), into: writeFixtures)
        }
        let executables = Platform.productsFolder
        for executable in plan.lessons.map(\.id.executable) + ["foundation-floor"] {
            let program = executables.appendingPathComponent(executable)
            guard FileManager.default.isExecutableFile(atPath: program.path) else {
                throw CompareError("\(executable) is not built next to lab in \(executables.path); run `swift build` first")
            }
        }
        let embedded = server == nil ? try LabServer.start() : nil
        defer { embedded?.stop() }
        let source: FixtureSource = embedded.map { .embedded($0) } ?? .external(URL(string: server!)!)
        if embedded == nil { try Self.checkAnswers(source, size: plan.sizes.min() ?? plan.faultSize) }

        let (folder, resultsFile, report, workFolder) = try prepareOutput()
        defer { try? FileManager.default.removeItem(at: workFolder) }

        Console.error("lab compare: \(plan.cases.count) runs (\(plan.settings.repetitionsSaid)) "
            + "against \(source.kind == .embedded ? "the embedded server" : source.baseURL.absoluteString); writing to \(folder.path)")
        let archives = folder.appendingPathComponent("har")
        do {
            try FileManager.default.createDirectory(at: archives, withIntermediateDirectories: true)
        } catch {
            throw CompareError("cannot create \(archives.path)")
        }
        let comparison = Comparison(plan: plan, source: source, executables: executables, workFolder: workFolder,
                                    archiveFolder: archives, progress: { Console.error($0) })
        let results = try comparison.run(label: label ?? ProcessInfo.processInfo.hostName)

        // Checked again: something may have taken either path during the run.
        try OutputFile.checkReplaceable(resultsFile)
        try OutputFile.checkReplaceable(report)
        do {
            try results.write(to: resultsFile)
            let html = HTMLReport(results: [results], lessonPagesPath: LessonPages.linkPrefix(nil, pageFolder: folder))
            try Data(html.render().utf8).write(to: report, options: .atomic)
            Console.output(report.path)
        } catch {
            throw CompareError("cannot write the results into \(folder.path): \(describe(error))")
        }
        if updatePages {
            for page in try Pages.update("Lessons", from: results) { Console.output(page) }
        }
        classSubmission.send(comparison: results)
    }

    /// The output folder, checked before an hour of measuring rather than after: its results
    /// file and report can be replaced, and a work folder of this run's own is made in it, so
    /// that removing that can never take anything that was there.
    private func prepareOutput() throws -> (folder: URL, results: URL, report: URL, work: URL) {
        let folder = try outputFolder()
        var isFolder: ObjCBool = false
        if updatePages, !(FileManager.default.fileExists(atPath: "Lessons", isDirectory: &isFolder) && isFolder.boolValue) {
            throw CompareError("--update-pages: there is no Lessons folder here; run it in the package's folder")
        }
        let resultsFile = folder.appendingPathComponent("results.json")
        let report = folder.appendingPathComponent("report.html")
        try OutputFile.checkReplaceable(resultsFile)
        try OutputFile.checkReplaceable(report)
        let workFolder = folder.appendingPathComponent(".lab-compare-work-\(UUID().uuidString.prefix(8))")
        do {
            try FileManager.default.createDirectory(at: workFolder, withIntermediateDirectories: false)
        } catch {
            throw CompareError("cannot create \(workFolder.path)")
        }
        return (folder, resultsFile, report, workFolder)
    }

    /// Another server must serve the fixtures before anything is measured or written: a HEAD
    /// of the smallest one, given 10 seconds.
    private static func checkAnswers(_ source: FixtureSource, size: Int64) throws {
        var request = URLRequest(url: source.url(for: Fixture(name: "compare-\(size).bin", size: size), faults: .none, run: ""),
                                 timeoutInterval: 10)
        request.httpMethod = "HEAD"
        let status: Int
        do {
            status = (try URLConnection.sendSynchronousRequest(request).response as? HTTPURLResponse)?.statusCode ?? 0
        } catch {
            throw CompareError("\(source.baseURL.absoluteString) does not answer: \(error.localizedDescription)")
        }
        guard status == 200 else {
            throw CompareError("\(request.url!.absoluteString) answers HTTP \(status), not the fixture; "
                + "serve the files of --write-fixtures, or run `lab serve`")
        }
    }

    /// The files a static server needs to stand in for the lab server: the same bytes under the
    /// same paths (a static server ignores the `?size=` query).
    private static func writeFixtureFiles(sizes: [Int64], into root: String) throws {
        let folder = URL(fileURLWithPath: root).appendingPathComponent("fixtures")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CompareError("cannot create \(folder.path)")
        }
        for size in sizes {
            let fixture = Fixture(name: "compare-\(size).bin", size: size)
            let file = folder.appendingPathComponent(fixture.name)
            try OutputFile.checkReplaceable(file)
            do {
                try fixture.write(to: file)
            } catch {
                throw CompareError("cannot write \(file.path): \(error)")
            }
            Console.output(file.path)
        }
    }

    private func outputFolder() throws -> URL {
        let folder: URL
        if let outputDir {
            folder = URL(fileURLWithPath: outputDir)
        } else {
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyy-MM-dd-HHmmss"
            formatter.locale = Locale(identifier: "en_US_POSIX")
            folder = URL(fileURLWithPath: "lab-results").appendingPathComponent(formatter.string(from: Date()))
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw CompareError("cannot create \(folder.path)")
        }
        return folder.standardizedFileURL
    }
}
