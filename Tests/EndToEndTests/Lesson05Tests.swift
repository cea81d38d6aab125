import Foundation
import LabFixtures
import LabKit
import LabPlatform
import LabServer
import LabVocabulary
import Synchronization
import TestFolders
import Testing

/// lesson-05-download-task-resume, run as a child process against the real embedded server.
///
/// Every run gets a TMPDIR of its own: Foundation's download temp files, the task's
/// `download-lab-<uid>/tmp` folder and the lesson's clean-up of Foundation's leftovers then concern
/// this run only, never the files of test suites running beside this one.
@Suite(.serialized)
final class Lesson05Tests {
    static let executable = "lesson-05-download-task-resume"

    private let bench: TestBench
    var server: LabServer { bench.server }
    var directory: URL { bench.directory }

    init() throws { bench = try TestBench() }

    // MARK: - Running the lesson

    /// A run's `--output` folder (the app's Documents) and its TMPDIR (the app's tmp).
    struct Folders {
        let output: URL
        let temporary: URL
        /// Where the download task keeps its `CFNetworkDownload_*.tmp` files.
        var taskTemporary: URL { temporary.appendingPathComponent("download-lab-\(getuid())/tmp") }
    }

    func folders(_ label: String) throws -> Folders {
        let base = directory.appendingPathComponent("\(label)-\(UUID().uuidString)")
        let temporary = base.appendingPathComponent("tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        return Folders(output: base.appendingPathComponent("Documents"), temporary: temporary)
    }

    func start(_ arguments: [String], _ folders: Folders, executable: String = Lesson05Tests.executable) throws
        -> ChildProcess {
        let child = try ChildProcess(executable, arguments)
        var environment = TestFolders.childEnvironment()
        environment["TMPDIR"] = folders.temporary.path
        child.process.environment = environment
        try child.start()
        return child
    }

    /// One finished run and the requests the server answered while it ran, oldest first.
    struct Run {
        let finished: ChildProcess.Finished
        let wire: [LoggedRequest]
    }

    /// Runs the lesson to the end, with what the server saw of it (only `token`'s requests, if given).
    func run(_ arguments: [String], _ folders: Folders, token: String? = nil) throws -> Run {
        let requestsBefore = server.requestLog.count
        let finished = try start(arguments, folders).wait()
        let wire = server.requestLog.dropFirst(requestsBefore)
            .filter { request in token.map { request.target.contains("run=\($0)") } ?? true }
        return Run(finished: finished, wire: Array(wire))
    }

    /// Every file and folder under `folder`, as paths relative to it.
    static func entries(of folder: URL) -> Set<String> {
        guard let enumerator = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        return Set(enumerator.compactMap { $0 as? String })
    }

    static func contents(of folder: URL) -> Set<String> {
        Set((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
    }

    /// `bytes=N-` → N.
    static func offset(ofRange range: String?) -> Int64? {
        guard let range, range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
        return Int64(range.dropFirst("bytes=".count).dropLast())
    }

    /// Where the lesson presses Pause: the first progress callback at or past 40% of the file.
    static func pausePoint(of fixture: Fixture) -> Int64 {
        Int64((0.4 * Double(fixture.size)).rounded(.up))
    }

    /// What may still arrive after Pause, and is kept: the chunks waiting for the delegate (at
    /// most 64 of 16 KiB) and what already sits in the socket's receive buffer. Shutting the
    /// socket down does not discard that buffer, and Linux grows it up to `net.ipv4.tcp_rmem`'s
    /// maximum (32 MiB on the test machines); 17.2 MiB was once kept under the full suite's load.
    /// Still well short of the file's end, so a download that never paused fails.
    static let keptAfterPause: Int64 = 34 << 20
    /// The furthest a resume after Pause may start: the pause point and what may be kept, and
    /// before the end of the file (a download that never paused has no resume).
    static func latestResume(of fixture: Fixture) -> Int64 {
        min(pausePoint(of: fixture) + keptAfterPause, fixture.size - 1)
    }
    /// What may cross the wire after Pause for nothing (the bound, with a wide margin).
    static let wastedAfterPause: Int64 = 4 << 20

    // MARK: - 1. The default run

    /// `lesson-05-download-task-resume --json --output <folder>`, as a student runs it.
    @Test(arguments: Variant.allCases)
    func defaultRunVerifies(variant: Variant) throws {
        let folders = try folders("default-\(variant)")
        var arguments = ["--json", "--output", folders.output.path]
        if variant == .article { arguments += ["--variant", "article"] }
        let finished = try run(arguments, folders).finished
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        let fixture = Fixture(name: Self.executable, size: 64 << 20)
        #expect(result.variant == variant)
        #expect(result.outcome == .verified)
        #expect(result.actualSHA256 == fixture.sha256Hex())
        #expect(result.attempts == 1)
        // The "user" pressed Pause once at 40%, then Resume.
        try #require(result.resumedFrom.count == 1)
        #expect(result.resumedFrom[0] >= Self.pausePoint(of: fixture))
        #expect(result.resumedFrom[0] < Self.latestResume(of: fixture))

        let saved = URL(fileURLWithPath: result.output)
        #expect(saved.deletingLastPathComponent().path == folders.output.path)
        switch variant {
        case .corrected:
            // Named after the resource; the resume data is gone once the file is complete.
            #expect(result.output == folders.output.appendingPathComponent(Self.executable).path)
            #expect(Self.contents(of: folders.output) == [Self.executable])
        case .article:
            // Named after the temporary file (LabKit's have 8 hex digits, Apple's other characters).
            #expect(saved.lastPathComponent.wholeMatch(of: /CFNetworkDownload_[0-9A-Za-z]+\.tmp/) != nil,
                    "\(result.output)")
            #expect(Self.contents(of: folders.output) == [saved.lastPathComponent])
        }
        #expect(try FileDigest.sha256Hex(of: saved) == fixture.sha256Hex())

        // Linux facts: the story (stderr, with --json) shows Foundation's own download task
        // first, which hands back no resume data there; and LabKit's sessions, which stand in
        // for Foundation's on Linux, tell when they are made and invalidated. Apple's tell nobody.
        guard Platform.isLinux else { return }
        let story = finished.stderr.split(separator: "\n").map(String.init)
        #expect(story.contains("    cancel(byProducingResumeData:) handed back nil"), "\(finished.stderr)")
        #expect(story.contains("    downloadTask(withResumeData:) made a task with no request to send: originalRequest is nil"),
                "\(finished.stderr)")

        // The article makes a session for each task (Start, then Resume) and invalidates none;
        // the corrected variant makes one and invalidates it when the file is saved.
        let sessions = story.filter { $0.hasPrefix("  download session ") }
        switch variant {
        case .article:
            #expect(sessions == ["  download session 1 created", "  download session 2 created"], "\(sessions)")
        case .corrected:
            #expect(sessions == ["  download session 1 created", "  download session 1 invalidated"], "\(sessions)")
        }
    }

    // MARK: - 2. Resuming from the offset in the blob

    @Test func pauseResumesFromTheOffsetInItsResumeData() throws {
        let fixture = Fixture(name: "paused", size: 12 << 20)
        let folders = try folders("paused")
        let token = UUID().uuidString
        let url = server.url(for: fixture, faults: nil, run: token)
        let download = try run(["--url", url.absoluteString, "--output", folders.output.path, "--json"],
                               folders, token: token)
        #expect(download.finished.status == 0, "\(download.finished.stderr)")
        let result = try download.finished.result()
        #expect(result.verified)
        #expect(result.output == folders.output.appendingPathComponent("paused").path)

        // Foundation's demo does not go through the lab's inspector: two GETs, the second a resume.
        try #require(result.requests.count == 2, "\(result.requests)")
        #expect(result.requests[0].range == nil)
        #expect(result.requests[0].status == 200)
        let resume = result.requests[1]
        let offset = try #require(Self.offset(ofRange: resume.range), "\(resume)")
        #expect(offset >= Self.pausePoint(of: fixture))
        #expect(offset < Self.latestResume(of: fixture))
        #expect(resume.ifRange == fixture.etag)
        #expect(resume.status == 206)
        #expect(resume.contentRange == "bytes \(offset)-\(fixture.size - 1)/\(fixture.size)")
        #expect(result.resumedFrom == [offset])

        // On the wire (with --url, Foundation's demo is skipped): the download and its resume,
        // which sent the rest only.
        try #require(download.wire.count == 2, "\(download.wire)")
        #expect(download.wire.map(\.range) == [nil, "bytes=\(offset)-"])
        #expect(download.wire[1].ifRange == fixture.etag)
        #expect(download.wire[1].bodyBytesSent == fixture.size - offset)
        #expect(!FileManager.default.fileExists(
            atPath: folders.output.appendingPathComponent("paused.resumedata").path))
        #expect(Self.contents(of: folders.taskTemporary).isEmpty)
    }

    /// Pause must stop the bytes. The server's log says how many it sent: one copy of the file
    /// and what crossed the wire after Pause for nothing, which must stay small.
    @Test(arguments: Variant.allCases)
    func pauseStopsTheTransfer(variant: Variant) throws {
        let fixture = Fixture(name: "stopped", size: 64 << 20)
        let folders = try folders("stopped-\(variant)")
        let token = UUID().uuidString
        let url = server.url(for: fixture, faults: nil, run: token)
        let download = try run(["--url", url.absoluteString, "--output", folders.output.path, "--json",
                                "--variant", variant.rawValue, "--sha256", fixture.sha256Hex()], folders, token: token)
        #expect(download.finished.status == 0, "\(download.finished.stderr)")
        try #require(download.wire.count == 2, "\(download.wire)")
        let resumedAt = try #require(Self.offset(ofRange: download.wire[1].range))
        // The first transfer ended soon after Pause, and what it sent past the resume offset is small.
        #expect(download.wire[0].bodyBytesSent <= Self.latestResume(of: fixture),
                "the paused transfer sent \(download.wire[0].bodyBytesSent) bytes")
        let again = download.wire.reduce(0) { $0 + $1.bodyBytesSent } - fixture.size
        #expect(again <= Self.wastedAfterPause, "\(again) bytes downloaded again")
        #expect(download.wire[1].bodyBytesSent == fixture.size - resumedAt)
        #expect(try download.finished.result().verified)
    }

    /// A download that is killed (SIGKILL) after the lesson's Pause and Resume.
    struct KilledDownload {
        let url: URL
        let token: String
        let arguments: [String]
        let folders: Folders
        /// Where the killed process's Resume asked to continue (`Range: bytes=N-`).
        let resumedAt: Int64
        /// The attempt counter on the server when it was killed.
        let lastAttempt: Int
    }

    /// Starts `variant` on a throttled `fixture` (8 MiB/s; the download and its resume each use
    /// up an attempt), waits until it has paused and resumed and `ready()` holds, then kills it
    /// with SIGKILL.
    func killAfterPause(_ variant: Variant, _ fixture: Fixture, label: String,
                        ready: (Folders) -> Bool) throws -> KilledDownload {
        let folders = try folders(label)
        let token = UUID().uuidString
        let url = server.url(for: fixture, faults: "throttle:8MiB,throttle:8MiB,throttle:8MiB", run: token)
        let arguments = ["--url", url.absoluteString, "--output", folders.output.path,
                         "--variant", variant.rawValue, "--json"]
        let child = try start(arguments, folders)
        let deadline = Date().addingTimeInterval(60)
        var resumedAt: Int64?
        while child.process.isRunning && Date() < deadline {
            if resumedAt == nil {
                resumedAt = server.requestLog.lazy.filter { $0.target.contains("run=\(token)") }
                    .compactMap { Self.offset(ofRange: $0.range) }.first
            }
            if resumedAt != nil && ready(folders) { break }
            usleep(10_000)
        }
        let killedWhileRunning = child.process.isRunning
        child.kill()
        let killed = child.wait()
        try #require(killedWhileRunning, "the lesson ended before it was killed: \(killed.stderr)")
        #expect(killed.status == SIGKILL)
        let lastAttempt = server.requestLog.filter { $0.target.contains("run=\(token)") }.map(\.attempt).max() ?? 0
        return KilledDownload(url: url, token: token, arguments: arguments, folders: folders,
                              resumedAt: try #require(resumedAt), lastAttempt: lastAttempt)
    }

    static func resumeDataFile(_ killed: KilledDownload, _ fixture: Fixture) -> URL {
        killed.folders.output.appendingPathComponent("\(fixture.name).resumedata")
    }

    static func storedResumeData(_ file: URL) -> ResumeData? {
        (try? Data(contentsOf: file)).flatMap { try? ResumeData.decode($0).resumeData }
    }

    /// The corrected variant killed once its Resume has written 20 MiB of 32 to the temporary
    /// file: the resume data on disk is the one saved on Pause, at about 40%.
    func killCorrected(label: String) throws -> (KilledDownload, Fixture) {
        let fixture = Fixture(name: "killed", size: 32 << 20)
        let killed = try killAfterPause(.corrected, fixture, label: label) { folders in
            let blob = folders.output.appendingPathComponent("\(fixture.name).resumedata")
            let tempFile = Self.storedResumeData(blob)?.tempFileName.map(folders.taskTemporary.appendingPathComponent)
            return tempFile.map(fileSize) ?? 0 >= 20 << 20
        }
        return (killed, fixture)
    }

    @Test(.enabled(if: Platform.isLinux, "the kill waits for the temporary file of LabKit's download task, Linux's stand-in"))
    func killedCorrectedDownloadResumesFromItsResumeDataFile() throws {
        let (killed, fixture) = try killCorrected(label: "kill-corrected")
        // The Resume after Pause continued from the resume data saved on Pause.
        #expect(killed.resumedAt >= Self.pausePoint(of: fixture))
        #expect(killed.resumedAt < Self.latestResume(of: fixture))

        // The blob on disk is the one Pause handed back: a kill gives no warning, and no other
        // resume data comes from a task that is running.
        let blob = try #require(Self.storedResumeData(Self.resumeDataFile(killed, fixture)))
        let received = blob.bytesReceived
        #expect(received == killed.resumedAt)
        #expect(blob.downloadURL == killed.url.absoluteString)
        #expect(blob.entityTag == fixture.etag)
        let tempFile = try #require(blob.tempFileName)
        #expect(fileSize(killed.folders.taskTemporary.appendingPathComponent(tempFile)) >= 20 << 20)

        // The same command again: it continues from the blob's offset.
        let rerun = try run(killed.arguments, killed.folders, token: killed.token)
        #expect(rerun.finished.status == 0, "\(rerun.finished.stderr)")
        let result = try rerun.finished.result()
        #expect(result.verified)
        let first = try #require(result.requests.first)
        #expect(first.range == "bytes=\(received)-")
        #expect(first.ifRange == fixture.etag)
        #expect(first.status == 206)
        #expect(first.contentRange == "bytes \(received)-\(fixture.size - 1)/\(fixture.size)")
        // Past 40% from the start, this run's Pause is pressed at its first progress callback.
        #expect(result.resumedFrom.count == 2)
        #expect(result.resumedFrom.first == received)
        #expect(result.bytesReceived < fixture.size)

        // On the wire: the download from the blob's offset (with --url there is no demo).
        let wire = rerun.wire.filter { $0.attempt > killed.lastAttempt }
        try #require(wire.count == 2, "\(wire)")
        #expect(wire[0].range == "bytes=\(received)-")
        #expect(wire[0].ifRange == fixture.etag)
        #expect(wire[0].status == 206)

        let saved = killed.folders.output.appendingPathComponent(fixture.name)
        #expect(result.output == saved.path)
        #expect(Self.contents(of: killed.folders.output) == [fixture.name])
        #expect(try FileDigest.sha256Hex(of: saved) == fixture.sha256Hex())
        #expect(Self.contents(of: killed.folders.taskTemporary).isEmpty)
    }

    @Test(.enabled(if: Platform.isLinux, "the kill waits for the temporary file of LabKit's download task, Linux's stand-in"))
    func killedArticleDownloadStartsOverFromZero() throws {
        let fixture = Fixture(name: "killed", size: 32 << 20)
        let killed = try killAfterPause(.article, fixture, label: "kill-article") { folders in
            let sizes = Self.contents(of: folders.taskTemporary)
                .map { fileSize(folders.taskTemporary.appendingPathComponent($0)) }
            return (sizes.max() ?? 0) >= 20 << 20
        }
        // The resume data lived in memory only.
        #expect(Self.contents(of: killed.folders.output).isEmpty)

        let rerun = try run(killed.arguments, killed.folders, token: killed.token)
        #expect(rerun.finished.status == 0, "\(rerun.finished.stderr)")
        let result = try rerun.finished.result()
        #expect(result.verified)
        let first = try #require(result.requests.first)
        #expect(first.range == nil)
        #expect(first.status == 200)
        // Only this run's own Pause at 40% resumes anything; everything came again.
        try #require(result.resumedFrom.count == 1)
        #expect(result.resumedFrom[0] >= Self.pausePoint(of: fixture))
        #expect(result.resumedFrom[0] < Self.latestResume(of: fixture))
        #expect(result.bytesReceived >= fixture.size)

        // On the wire: the download, again from byte 0 (with --url there is no demo).
        let wire = rerun.wire.filter { $0.attempt > killed.lastAttempt }
        try #require(wire.count == 2, "\(wire)")
        #expect(wire[0].range == nil)
        #expect(wire[0].status == 200)
        #expect(wire[0].bodyBytesSent >= Self.pausePoint(of: fixture))
        #expect(wire[1].range == "bytes=\(result.resumedFrom[0])-")

        #expect(!Self.contents(of: killed.folders.output).contains { $0.hasSuffix(".resumedata") })
        #expect(Self.contents(of: killed.folders.output).count == 1)
    }
}
