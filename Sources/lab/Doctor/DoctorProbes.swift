import Foundation
import LabFixtures
import LabHarness
import LabKit
import LabPlatform
import LabServer
import LabVocabulary

/// Runs `lab doctor`'s checks, each for real: the toolchain asked its version, the lab server
/// started on the loopback port, a lesson run against it and its file hashed from outside, an
/// exercise check run as a student runs it. Whatever it makes goes when `finish()` runs.
final class DoctorProbes {
    let port: Int
    let ignoringLock: Bool
    /// The server the port check started, which the runs download from.
    private(set) var serverForRuns: LabServer?
    /// The doctor's folder inside the lab's own, removed at the end.
    private(set) var workFolderForRuns: URL?
    /// What `swift --version` said, for the line to paste.
    private(set) var swiftVersion: String?

    /// The lesson run's file: big enough to be cut at 40% and resumed, small enough to take a moment.
    static let lessonRunSize: Int64 = 8 << 20
    /// `lab compare`'s largest file by default is 128 MiB and an exercise's memory check 96 MiB,
    /// each on disk with a copy or two beside it.
    static let diskNeeded: Int64 = 1 << 30

    init(port: Int, ignoringLock: Bool) {
        self.port = port
        self.ignoringLock = ignoringLock
        labFolderWasThere = FileManager.default.fileExists(atPath: LabFolders.mine.path)
    }

    /// The lab's folder, made by the doctor alone, goes with it: a check leaves nothing behind.
    private let labFolderWasThere: Bool

    /// Every check, in the table's order; one that needs a check with a problem is not run.
    func runAll() -> [DoctorFinding] {
        defer { finish() }
        var findings: [DoctorFinding] = []
        for check in DoctorCheck.allCases {
            let blocking = check.needs.filter { need in findings.contains { $0.check == need && $0.stopsAClass } }
            if !blocking.isEmpty {
                findings.append(DoctorFinding(check: check, verdict: .notRun,
                                              detail: "needs " + blocking.map(\.title).joined(separator: " and ") + " (above)"))
                continue
            }
            findings.append(run(check))
        }
        return findings
    }

    private func run(_ check: DoctorCheck) -> DoctorFinding {
        let outcome: (DoctorFinding.Verdict, String)
        switch check {
        case .toolchain: outcome = toolchain()
        case .headers: outcome = headers()
        case .products: outcome = products()
        case .loopbackPort: outcome = loopbackPort()
        case .outputFolder: outcome = outputFolder()
        case .freeDisk: outcome = freeDisk()
        case .tool(let tool): outcome = find(tool)
        case .testTool(let tool): outcome = find(tool)
        case .lessonRun: outcome = lessonRun()
        case .comparison: outcome = comparison()
        case .exerciseCheck: outcome = exerciseCheck()
        }
        return DoctorFinding(check: check, verdict: outcome.0, detail: outcome.1)
    }

    private func finish() {
        serverForRuns?.stop()
        if let workFolderForRuns { try? FileManager.default.removeItem(at: workFolderForRuns) }
        // rmdir removes it only when empty: files another run put there stay.
        if !labFolderWasThere { rmdir(LabFolders.mine.path) }
    }

    /// Why the temporary folder TMPDIR names cannot be used, or nil: swift and the lab keep their
    /// temporary files there, and the doctor makes no folder of that path (a lesson would).
    private static var unusableTemporaryFolder: String? {
        guard let temporary = ProcessInfo.processInfo.environment["TMPDIR"], !temporary.isEmpty, access(temporary, W_OK | X_OK) != 0
        else { return nil }
        return "TMPDIR is \(temporary), which is not a folder this user can write: swift and the lab keep their temporary files there"
    }

    // MARK: The machine

    private func toolchain() -> (DoctorFinding.Verdict, String) {
        let floor = Platform.minimumToolchain
        // swift writes its temporary files there before it answers anything.
        if let unusable = Self.unusableTemporaryFolder { return (.problem, unusable) }
        swiftVersion = SwiftToolchain.version()
        guard let version = swiftVersion else {
            return (.problem, "`swift --version` did not answer: is a Swift toolchain on PATH? The lab needs \(floor.shownAs) or later")
        }
        guard floor.isMet(by: version) else {
            return (.problem, "Swift \(version) is older than \(floor.shownAs), the oldest the lab builds with")
        }
        return (.ok, "Swift \(version) (\(floor.shownAs) or later)")
    }

    /// The C libraries the package links, each with the header its module includes.
    private static let libraries: [(name: String, headers: [String], neededFor: String, package: String)] = [
        ("libxml2", ["libxml2/libxml/xmlversion.h", "libxml/xmlversion.h"], "the HTML report", "libxml2-dev"),
        ("libcurl", ["curl/curl.h"], "lesson 09's transfer service", "libcurl4-openssl-dev"),
        ("SQLite", ["sqlite3.h"], "the class server's store", "libsqlite3-dev"),
        ("zlib", ["zlib.h"], "the server's gzip fault", "zlib1g-dev"),
    ]

    private func headers() -> (DoctorFinding.Verdict, String) {
        let folders = Platform.systemHeaderFolders()
        guard !folders.isEmpty else {
            return (.problem, "no SDK: `xcrun --show-sdk-path` named none (install Xcode, or run `xcode-select --install`)")
        }
        let missing = Self.libraries.filter { library in
            !folders.contains { folder in library.headers.contains { FileManager.default.fileExists(atPath: folder.appendingPathComponent($0).path) } }
        }
        guard missing.isEmpty else {
            let names = missing.map { "\($0.name) (\($0.neededFor); Debian: \($0.package))" }
            return (.problem, "no headers for " + names.joined(separator: ", ") + " in " + folders.map(\.path).joined(separator: ", "))
        }
        return (.ok, Self.libraries.map(\.name).joined(separator: ", ") + " in " + folders[0].path)
    }

    private func products() -> (DoctorFinding.Verdict, String) {
        let folder = Platform.productsFolder
        let programs = LessonID.allCases.flatMap { [$0.executable, $0.exerciseExecutable] } + ["lab-measure", "foundation-floor"]
        let missing = programs.filter { !FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent($0).path) }
        guard missing.isEmpty else {
            let named = missing.prefix(3).joined(separator: ", ") + (missing.count > 3 ? " and \(missing.count - 3) more" : "")
            return (.problem, "\(missing.count) of the lab's \(programs.count) programs are not in \(folder.path) (\(named)): "
                    + "run `swift build` in the package's folder")
        }
        return (.ok, "\(programs.count) programs in \(folder.path)")
    }

    private func loopbackPort() -> (DoctorFinding.Verdict, String) {
        do {
            let started = try LabServer.start(host: "127.0.0.1", port: port)
            serverForRuns = started
            return (.ok, "the lab server listens on \(started.baseURL.absoluteString)")
        } catch {
            // The server's errors say it themselves ("cannot listen on 127.0.0.1:8080: address already in use").
            return (.problem, "\(error)")
        }
    }

    private func outputFolder() -> (DoctorFinding.Verdict, String) {
        if let unusable = Self.unusableTemporaryFolder { return (.problem, unusable) }
        let folder = LabFolders.mine.appendingPathComponent("doctor-\(getpid())", isDirectory: true)
        do {
            try LabFolders.make(folder)
            let probe = folder.appendingPathComponent("written")
            try Data("lab doctor".utf8).write(to: probe)
            workFolderForRuns = folder
            return (.ok, "\(LabFolders.mine.path), this user's only")
        } catch {
            return (.problem, describe(error))
        }
    }

    private func freeDisk() -> (DoctorFinding.Verdict, String) {
        var folder = LabFolders.mine
        while !FileManager.default.fileExists(atPath: folder.path), folder.pathComponents.count > 1 { folder.deleteLastPathComponent() }
        guard let free = (try? FileManager.default.attributesOfFileSystem(forPath: folder.path))?[.systemFreeSize] as? NSNumber else {
            return (.problem, "cannot tell how much space is free in \(folder.path)")
        }
        let shown = "\(ByteFormat.iec(free.int64Value)) free in \(folder.path)"
        guard free.int64Value >= Self.diskNeeded else {
            return (.problem, "only \(shown): the lab's runs need \(ByteFormat.iec(Self.diskNeeded))")
        }
        return (.ok, "\(shown) (\(ByteFormat.iec(Self.diskNeeded)) needed)")
    }

    private func find(_ tool: OptionalTool) -> (DoctorFinding.Verdict, String) {
        if let found = References.which(tool.rawValue)?.path { return (.ok, found) }
        return (.missing, "optional: " + tool.lostWithout)
    }

    private func find(_ tool: TestTool) -> (DoctorFinding.Verdict, String) {
        switch tool {
        case .nginx:
            if let found = References.nginx { return (.ok, found.path) }
        case .jsonschema:
            guard let python = References.which("python3") else { return (.problem, "no python3 on PATH: " + tool.neededFor) }
            let asked = try? ChildCommand.run(python, ["-c", "import jsonschema"], timeout: .seconds(60))
            if asked?.status == 0 { return (.ok, "\(python.path) imports jsonschema") }
        }
        return (.problem, "not found: " + tool.neededFor)
    }
}
