import Foundation
import LabFixtures
import LabKit
import LabPlatform
import LabServer
import LabVocabulary
import Synchronization
import TestFolders
import Testing

/// Lesson 05's saved file's name and temporary files, its resume data read back by `lab
/// inspect-resume-data`, hostile resume data, local failures and HTTP errors (Lesson05Tests.swift
/// has the runs that pause and resume).
extension Lesson05Tests {
    // MARK: - 3. The saved file's name

    /// Names LabServer serves ([A-Za-z0-9._-]) that `safeFileName` must still change.
    @Test(arguments: [("..evil", "evil"), ("...", "download"), ("report.pdf", "report.pdf")])
    func savedFileIsNamedAfterTheResource(name: String, saved: String) throws {
        let fixture = Fixture(name: name, size: 1 << 20)
        let folders = try folders("named")
        let url = server.url(for: fixture, faults: nil, run: UUID().uuidString)
        let finished = try run(["--url", url.absoluteString, "--output", folders.output.path, "--json"], folders).finished
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.verified)
        #expect(result.output == folders.output.appendingPathComponent(saved).path)
        #expect(Self.contents(of: folders.output) == [saved])
    }

    /// LabServer only serves fixture names made of [A-Za-z0-9._-], so a hostile path comes from a
    /// bare server of the test's own that serves a fixture at any path.
    @Test func hostileURLPathCannotLeaveTheFolder() throws {
        let fixture = Fixture(name: "hostile", size: 1 << 20)
        let peer = try AnyPathServer(fixture: fixture)
        defer { peer.stop() }
        let folders = try folders("hostile-path")
        // `<folder>/../../evil` would be `<base>/../evil`: next to this test's other folders.
        let url = "http://127.0.0.1:\(peer.port)/files/..%2F..%2Fevil"
        let finished = try run(["--url", url, "--output", folders.output.path, "--sha256", fixture.sha256Hex(),
                                "--json"], folders).finished
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.verified)
        // The path reached the server as sent, and its last component, decoded, is "../../evil".
        #expect(peer.requestLines.contains("GET /files/..%2F..%2Fevil HTTP/1.1"), "\(peer.requestLines)")
        #expect(URL(string: url)?.lastPathComponent == "../../evil")
        #expect(result.output == folders.output.appendingPathComponent("evil").path)
        #expect(Self.contents(of: folders.output) == ["evil"])
        let strays = Self.entries(of: directory).filter { $0.hasSuffix("evil") && !$0.hasSuffix("/Documents/evil") }
        #expect(strays.isEmpty, "\(strays)")
    }

    /// Separators and dots hidden in one character with what follows them: a joiner after `/`
    /// (removed as a format character, it would leave a bare `/`), a combining mark after the
    /// leading dot, and a line separator. Each path's last component, decoded, is the name.
    @Test(arguments: [
        ("%2F%E2%80%8D..%2F%E2%80%8D..%2F%E2%80%8Devil", "evil"),
        (".%CC%81evil", "\u{301}evil"),
        ("ev%E2%80%A8il%E2%80%A9", "evil"),
        ("..%E2%80%8D%2Fevil.resumedata", "evil.resumedata.download"),
    ])
    func hostileCharactersInAURLPathCannotLeaveTheFolder(path: String, saved: String) throws {
        let fixture = Fixture(name: "hostile", size: 1 << 20)
        let peer = try AnyPathServer(fixture: fixture)
        defer { peer.stop() }
        let folders = try folders("hostile-characters")
        let finished = try run(["--url", "http://127.0.0.1:\(peer.port)/files/\(path)", "--output", folders.output.path,
                                "--sha256", fixture.sha256Hex(), "--json"], folders).finished
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.verified)
        #expect(result.output == folders.output.appendingPathComponent(saved).path)
        #expect(Self.contents(of: folders.output) == [saved])
        let strays = Self.entries(of: directory).filter { $0.hasSuffix("evil") && !$0.contains("/Documents") }
        #expect(strays.isEmpty, "\(strays)")
    }

    @Test func hostileContentDispositionCannotLeaveTheFolder() throws {
        // Large enough that Pause stops the first transfer before its end: the resume gets a 206,
        // which names the file, rather than a 416, which does not.
        let fixture = Fixture(name: "disposition", size: 16 << 20)
        let peer = try AnyPathServer(fixture: fixture,
                                     extraHeaders: ["Content-Disposition: attachment; filename=\"../../evil.bin\""])
        defer { peer.stop() }
        let folders = try folders("hostile-disposition")
        let url = "http://127.0.0.1:\(peer.port)/files/plain.bin"
        let finished = try run(["--url", url, "--output", folders.output.path, "--sha256", fixture.sha256Hex(),
                                "--json"], folders).finished
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.verified)
        // The server's name wins over the URL's, reduced to one harmless component.
        let saved = URL(fileURLWithPath: result.output)
        #expect(saved.deletingLastPathComponent().path == folders.output.path)
        #expect(saved.lastPathComponent.hasSuffix("evil.bin"), "\(result.output)")
        #expect(!saved.lastPathComponent.hasPrefix("."))
        #expect(!saved.lastPathComponent.contains("/"))
        #expect(Self.contents(of: folders.output) == [saved.lastPathComponent])
        let strays = Self.entries(of: directory).filter { $0.hasSuffix("evil.bin") && !$0.contains("/Documents/") }
        #expect(strays.isEmpty, "\(strays)")
    }

    // MARK: - 4. Temporary files

    @Test(.enabled(if: Platform.isLinux, "Foundation on Linux never deletes its download tasks' temporary files"),
          arguments: Variant.allCases)
    func noDownloadTemporaryFilesAreLeftBehind(variant: Variant) throws {
        let folders = try folders("temporary-\(variant)")
        // Someone else's file, there before the run: the lesson must not touch it.
        let decoy = folders.temporary.appendingPathComponent("\(UUID().uuidString).tmp")
        try Data("not the lesson's".utf8).write(to: decoy)
        func temporaryFiles() -> Set<String> {
            Set(Self.contents(of: folders.temporary).filter { $0.hasSuffix(".tmp") })
                .union(Self.contents(of: folders.taskTemporary).map { "download-lab-\(getuid())/tmp/" + $0 })
        }
        let before = temporaryFiles()
        #expect(before == [decoy.lastPathComponent])

        let finished = try run(["--json", "--output", folders.output.path, "--variant", variant.rawValue], folders).finished
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(try finished.result().outcome == .verified)
        // Foundation's download task left its file in a folder of the lesson's; the lesson deleted it.
        #expect(finished.stderr.contains("\n    deleted 1 temporary file(s) it left behind\n"), "\(finished.stderr)")
        #expect(temporaryFiles() == before)
        #expect(FileManager.default.fileExists(atPath: decoy.path))
    }

    // MARK: - 5. lab inspect-resume-data

    @Test(.enabled(if: Platform.isLinux, "the kill waits for the temporary file of LabKit's download task, Linux's stand-in"))
    func inspectResumeDataReadsTheBlobLesson05Wrote() throws {
        let (killed, fixture) = try killCorrected(label: "inspect")
        let file = Self.resumeDataFile(killed, fixture)
        let blob = try #require(Self.storedResumeData(file))

        let inspected = try ChildProcess.run("lab", ["inspect-resume-data", file.path])
        #expect(inspected.status == 0, "\(inspected.stderr)")
        let lines = inspected.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("form            keyed archive (iOS 12 and later)"), "\(inspected.stdout)")
        #expect(lines.contains("URL             \(killed.url.absoluteString)"), "\(inspected.stdout)")
        #expect(lines.contains("bytes received  \(Self.grouped(blob.bytesReceived))"), "\(inspected.stdout)")
        #expect(lines.contains("validator       ETag \(fixture.etag)"), "\(inspected.stdout)")
        #expect(lines.contains("temp file       \(blob.tempFileName ?? "?")"), "\(inspected.stdout)")
        #expect(lines.contains("current request Range: bytes=\(blob.bytesReceived)-"), "\(inspected.stdout)")
        #expect(blob.bytesReceived >= Self.pausePoint(of: fixture))
        #expect(inspected.stderr.isEmpty)
    }

    /// 13438144 → "13,438,144".
    static func grouped(_ value: Int64) -> String {
        var digits = Array(String(value))
        var index = digits.count - 3
        while index > 0 {
            digits.insert(",", at: index)
            index -= 3
        }
        return String(digits)
    }

    // MARK: - 6. Hostile resume data

    /// A resume data file planted in the output folder, whose temp file name would lead out of
    /// the lesson's temp folder. `key` is where the name is: the file name (iOS 9 and later) or
    /// the full path (iOS 7 and 8).
    static let hostileNames: [(key: String, name: String)] = [
        ("NSURLSessionResumeInfoTempFileName", ".."),
        ("NSURLSessionResumeInfoTempFileName", "."),
        ("NSURLSessionResumeInfoTempFileName", "/"),
        ("NSURLSessionResumeInfoTempFileName", "a/../../b"),
        ("NSURLSessionResumeInfoTempFileName", "/etc/passwd"),
        ("NSURLSessionResumeInfoLocalPath", "/x/.."),
        ("NSURLSessionResumeInfoLocalPath", "/x/."),
        ("NSURLSessionResumeInfoLocalPath", "/"),
    ]

    @Test(.enabled(if: Platform.isLinux, "LabKit's downloadTask(withResumeData:) refuses these blobs; what Apple's makes of them is not known here"),
          arguments: hostileNames)
    func hostileResumeDataTouchesNothing(key: String, name: String) throws {
        let fixture = Fixture(name: "planted", size: 1 << 20)
        let folders = try folders("planted")
        let url = server.url(for: fixture, faults: nil, run: UUID().uuidString)
        // Canaries beside the lesson's temp folder, which `..` would name.
        try FileManager.default.createDirectory(at: folders.taskTemporary, withIntermediateDirectories: true)
        let canary = folders.temporary.appendingPathComponent("canary")
        try Data("still here".utf8).write(to: canary)
        let canaryFolder = folders.temporary.appendingPathComponent("canary-folder")
        try FileManager.default.createDirectory(at: canaryFolder, withIntermediateDirectories: true)
        try Data("me too".utf8).write(to: canaryFolder.appendingPathComponent("inner"))
        try FileManager.default.createDirectory(at: folders.output, withIntermediateDirectories: true)
        let blobFile = folders.output.appendingPathComponent("planted.resumedata")
        let blob = try PropertyListSerialization.data(fromPropertyList: [
            "NSURLSessionDownloadURL": url.absoluteString,
            "NSURLSessionResumeBytesReceived": NSNumber(value: 10),
            "NSURLSessionResumeEntityTag": fixture.etag,
            key: name,
        ] as [String: Any], format: .xml, options: 0)
        try blob.write(to: blobFile)
        func canariesSurvive() -> Bool {
            (try? Data(contentsOf: canary)) == Data("still here".utf8)
                && (try? Data(contentsOf: canaryFolder.appendingPathComponent("inner"))) == Data("me too".utf8)
        }

        let corrected = try run(["--url", url.absoluteString, "--output", folders.output.path, "--json", "--quiet"],
                                folders).finished
        #expect(corrected.status == ExitStatus.verificationFailed.rawValue, "\(corrected.stderr)")
        #expect(corrected.stderr == "\(Self.executable): \(blobFile.path) is not usable resume data ("
            + "no request can be read from it); nothing was touched: remove it to start over\n")
        #expect(try corrected.result().outcome == .badInput)
        #expect(try Data(contentsOf: blobFile) == blob, "the planted file stays as it was")
        #expect(canariesSurvive())
        #expect(Self.contents(of: folders.temporary) == ["download-lab-\(getuid())", "canary", "canary-folder"])

        // The article keeps resume data in memory only: it never reads the file.
        let article = try run(["--url", url.absoluteString, "--output", folders.output.path, "--json",
                               "--variant", "article"], folders).finished
        #expect(article.status == 0, "\(article.stderr)")
        #expect(canariesSurvive())

        let inspected = try ChildProcess.run("lab", ["inspect-resume-data", blobFile.path])
        #expect(inspected.status == 65)
        #expect(inspected.stderr.split(separator: "\n").count == 1, "\(inspected.stderr)")
        #expect(inspected.stderr.contains("a plain file name"), "\(inspected.stderr)")
        #expect(canariesSurvive())
    }

    // MARK: - 7. Local failures

    /// A disk that fills up mid-download: one line, exit 74, and resume data that a rerun uses.
    @Test(.enabled(if: Platform.isLinux, "--disk-full-after fills the writes of LabKit's download task; Apple's writes its own file"))
    func fullDiskKeepsResumeDataForTheRerun() throws {
        let fixture = Fixture(name: "full", size: 16 << 20)
        let folders = try folders("full")
        let token = UUID().uuidString
        let url = server.url(for: fixture, faults: nil, run: token)
        let arguments = ["--url", url.absoluteString, "--output", folders.output.path, "--json"]
        let full = try run(arguments + ["--disk-full-after", "5MiB", "--quiet"], folders, token: token).finished
        #expect(full.status == ExitStatus.localIOFailed.rawValue, "\(full.stderr)")
        #expect(full.stderr.hasPrefix("\(Self.executable): cannot write \(folders.taskTemporary.path)/CFNetworkDownload_"),
                "\(full.stderr)")
        // Apple's code for a download task's failed write: URLError.cannotWriteToFile.
        #expect(full.stderr.hasSuffix(": The operation could not be completed. No space left on device (URLError -3003)\n"),
                "\(full.stderr)")
        #expect(full.stderr.split(separator: "\n").count == 1, "\(full.stderr)")
        #expect(try full.result().outcome == .ioFailed)
        let blob = try #require(Self.storedResumeData(folders.output.appendingPathComponent("full.resumedata")))
        #expect(blob.bytesReceived >= 4 << 20 && blob.bytesReceived <= 5 << 20, "\(blob.bytesReceived)")
        let tempFile = folders.taskTemporary.appendingPathComponent(try #require(blob.tempFileName))
        #expect(fileSize(tempFile) >= blob.bytesReceived)

        let rerun = try run(arguments, folders, token: token)
        #expect(rerun.finished.status == 0, "\(rerun.finished.stderr)")
        #expect(rerun.wire.first?.range == "bytes=\(blob.bytesReceived)-")
        #expect(try rerun.finished.result().verified)
    }

    /// A TMPDIR nothing can be written to (root too): the side demonstration is skipped in one
    /// line, and the download's own temp file fails as a local error, with no crash.
    @Test(.enabled(if: Platform.isLinux, "the demonstration of Foundation on Linux, and the temporary folder of Linux's stand-in"))
    func unwritableTemporaryFolderIsOneLine() throws {
        let folders = try folders("unwritable")
        let child = try ChildProcess(Self.executable, ["--size", "1MiB", "--output", folders.output.path])
        var environment = TestFolders.childEnvironment()
        environment["TMPDIR"] = Platform.folderThatTakesNoFiles
        child.process.environment = environment
        try child.start()
        let finished = child.wait(timeout: 60)
        #expect(finished.status == ExitStatus.localIOFailed.rawValue, "\(finished.stderr)")
        #expect(finished.stdout.contains("\n  (Foundation's own download task is not shown: cannot create \(Platform.folderThatTakesNoFiles)/"),
                "\(finished.stdout)")
        #expect(finished.stderr.hasPrefix("\(Self.executable): cannot write \(Platform.folderThatTakesNoFiles)/download-lab-\(getuid())/tmp/CFNetworkDownload_"),
                "\(finished.stderr)")
        #expect(finished.stderr.split(separator: "\n").count == 1, "\(finished.stderr)")
    }

    /// An output folder that takes no files: the resume data cannot be saved, the saved
    /// file cannot be written, and no temporary file is left behind.
    @Test func outputThatTakesNoFilesLeavesNoTemporaryFile() throws {
        let fixture = Fixture(name: "nowhere", size: 16 << 20)
        let folders = try folders("nowhere")
        let url = server.url(for: fixture, faults: nil, run: UUID().uuidString)
        let folder = Platform.folderThatTakesNoFiles
        let finished = try run(["--url", url.absoluteString, "--output", folder, "--json"], folders).finished
        #expect(finished.status == ExitStatus.localIOFailed.rawValue, "\(finished.stderr)")
        #expect(finished.stderr.contains("\n  cannot save resume data to \(folder)/nowhere.resumedata: "), "\(finished.stderr)")
        // The reason after the path is the system's own sentence (ENOENT from procfs, EROFS on a Mac).
        let lastLine = finished.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(lastLine.hasPrefix("\(Self.executable): cannot write \(folder)/nowhere: "), "\(finished.stderr)")
        #expect(finished.stderr.hasSuffix("\n"), "\(finished.stderr)")
        // Pause resumed from the blob in hand, not from byte 0.
        #expect(try finished.result().resumedFrom.first.map { $0 >= Self.pausePoint(of: fixture) } == true)
        #expect(Self.contents(of: folders.taskTemporary).isEmpty)
    }

    // MARK: - 8. HTTP errors

    @Test func notFoundIsAOneLineTransferFailure() throws {
        let folders = try folders("not-found")
        // A path the server does not know: every request, Foundation's demo included, gets a 404.
        // (A `status:404` fault would be used up by the demo, which shares the URL given with --url.)
        let url = server.baseURL.appendingPathComponent("missing/lesson-05.bin")
        let download = try run(["--url", url.absoluteString, "--output", folders.output.path, "--json", "--quiet"],
                               folders)
        #expect(download.finished.status == ExitStatus.transferFailed.rawValue)
        #expect(download.finished.stderr == "\(Self.executable): HTTP 404 Not Found from \(url.absoluteString)\n")
        let result = try download.finished.result()
        #expect(result.outcome == .transferFailed)
        #expect(result.attempts == 1)
        #expect(result.requests.map(\.status) == [404])
        // Nothing saved, no resume data, no temp file.
        #expect(Self.contents(of: folders.output).isEmpty)
        #expect(Self.contents(of: folders.taskTemporary).isEmpty)
    }
}
