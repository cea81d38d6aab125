import Foundation
import LabFixtures
import LabKit
import LabServer
import LabVocabulary
import TestServers
import TestThreads
import Testing

/// Lesson 09 against hostile servers and a phone's folder with things planted in it: no answer is
/// taken for a file it is not, nothing is written outside the lab's folders, and two runs never
/// share one folder.
@Suite(.serialized)
struct Lesson09FolderTests {
    static let executable = LessonID.backgroundSession.executable

    /// The connection closes inside a response's header: a network failure, tried again, and
    /// never a finished download. The bytes from before stay, resumable.
    @Test func aHeaderThatNeverEndsIsNoDownload() async throws {
        try await OffThePool.run {
            let server = try CannedHTTPServer(answers: [
                // Half of the announced file, then the connection closes.
                Data("HTTP/1.1 200 OK\r\nContent-Length: 200000\r\nETag: \"v1\"\r\n\r\n".utf8) + Data(repeating: 7, count: 100_000),
                // Every retry: a head that never ends.
                Data("HTTP/1.1 206 Partial Content\r\nX-A: b\r\n".utf8),
            ])
            defer { server.stop() }
            let (finished, output) = try Lesson09Tests.run(answeredBy: server, ["--life", "", "--max-attempts", "1"])
            defer { try? FileManager.default.removeItem(at: output.deletingLastPathComponent()) }
            #expect(finished.status == ExitStatus.transferFailed.rawValue, "\(finished.stderr)")
            #expect(finished.stdout.contains("the connection closed before the response's header ended (URLError -1005); trying again"),
                    "\(finished.stdout.suffix(1500))")
            #expect(!finished.stdout.contains("downloaded:"), "\(finished.stdout.suffix(1500))")
            #expect(!FileManager.default.fileExists(atPath: output.path))
            // What arrived before stays for the next run to resume.
            let tasks = output.path + ".phone/service/tasks"
            let partials = try FileManager.default.contentsOfDirectory(atPath: tasks).filter { $0.hasSuffix(".part") }
            #expect(partials.map { fileSize(URL(fileURLWithPath: tasks).appendingPathComponent($0)) } == [100_000], "\(partials)")
        }
    }

    /// The service's journal of tasks, planted at 1 GiB: the phone does not read it whole, and the
    /// run ends as usual.
    @Test func aHugeJournalInThePhonesFolderIsNotRead() async throws {
        try await OffThePool.run {
            try withLabServer { server in
                let folder = try scratchDirectory()
                defer { try? FileManager.default.removeItem(at: folder) }
                let output = folder.appendingPathComponent("lesson-09.bin")
                // A first run that fails at once leaves the phone's folder, as the lab made it.
                let refused = try Lesson09Tests.run(["--max-attempts", "1"], size: 1 << 20, faults: "status:404", server: server, output: output)
                #expect(refused.finished.status == ExitStatus.transferFailed.rawValue, "\(refused.finished.stderr)")
                let journal = output.path + ".phone/service/created.jsonl"
                #expect(truncate(journal, 1 << 30) == 0)
                let ran = try Lesson09Tests.run(["--life", ""], size: 1 << 20, server: server, output: output, timeout: 60)
                #expect(ran.finished.status == 0, "\(ran.finished.stderr.suffix(600))")
                #expect(try #require(ran.record).peakRSSBytes < 200 << 20)
            }
        }
    }

    /// Two runs on one file: the second is refused at once, with one line, and the first ends as
    /// if alone. A run that was killed leaves nothing held.
    @Test func oneRunPerFileAtATime() async throws {
        try await OffThePool.run {
            let paced = try PacedRun()
            defer { paced.end() }
            let first = try ChildProcess(Self.executable, paced.arguments)
            try first.start()
            _ = try waitForThePartialFile(of: paced.output)
            let second = try ChildProcess.run(Self.executable, paced.arguments, timeout: 30)
            #expect(second.status == ExitStatus.localIOFailed.rawValue, "\(second.stderr)")
            #expect(second.stderr == "\(Self.executable): cannot write \(paced.output.path).phone: another run is downloading to the same "
                    + "file: its phone's folder is in use\n", "\(second.stderr)")
            let firstFinished = first.wait(timeout: 60)
            #expect(firstFinished.status == 0, "\(firstFinished.stderr.suffix(600))")
            #expect(try FileDigest.sha256Hex(of: paced.output) == paced.fixture.sha256Hex())

            // Killed mid-way, a run holds nothing: the next one goes on where it stopped.
            try FileManager.default.removeItem(at: paced.output)
            _ = try killMidway(paced)
            let next = try ChildProcess.run(Self.executable, paced.arguments, timeout: 60)
            #expect(next.status == 0, "\(next.stderr.suffix(600))")
            #expect(try FileDigest.sha256Hex(of: paced.output) == paced.fixture.sha256Hex())
        }
    }

    /// A hard link planted as a task's partial file, to a file outside the lab's folders: the
    /// service does not write through it, and downloads the file from its start.
    @Test func aHardLinkPlantedAsAPartialFileIsNotWrittenThrough() async throws {
        try await OffThePool.run {
            let paced = try PacedRun()
            defer { paced.end() }
            let partial = try killMidway(paced)
            let outside = paced.folder.appendingPathComponent("outside.txt")
            let outsideBytes = Data("not the lab's\n".utf8)
            try outsideBytes.write(to: outside)
            try FileManager.default.removeItem(at: partial)
            try FileManager.default.linkItem(at: outside, to: partial)

            let ran = try ChildProcess.run(Self.executable, paced.arguments, timeout: 60)
            #expect(ran.status == 0, "\(ran.stderr.suffix(600))")
            #expect(try FileDigest.sha256Hex(of: paced.output) == paced.fixture.sha256Hex())
            #expect(try Data(contentsOf: outside) == outsideBytes)
        }
    }

    /// 4 MiB from a lab server that paces every GET at 4 MiB/s, the runs' and their retries'
    /// alike, into a scratch folder: each run is still going when looked at.
    private struct PacedRun {
        let server: LabServer
        let folder: URL
        let output: URL
        let fixture = Fixture(name: "lesson-09.bin", size: 4 << 20)
        let arguments: [String]

        init() throws {
            server = try LabServer.start()
            folder = try scratchDirectory()
            output = folder.appendingPathComponent("lesson-09.bin")
            let faults = Array(repeating: "throttle:4MiB", count: 8).joined(separator: ",")
            let url = server.url(for: fixture, faults: faults, run: "l09-paced-\(UUID().uuidString.prefix(8))").absoluteString
            arguments = ["--url", url, "--sha256", fixture.sha256Hex(), "--output", output.path, "--life", ""]
        }

        func end() {
            server.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// A run killed once its task's partial file holds bytes: the file, left for the next run.
    private func killMidway(_ paced: PacedRun) throws -> URL {
        let killed = try ChildProcess(Self.executable, paced.arguments)
        try killed.start()
        let partial = try waitForThePartialFile(of: paced.output)
        killed.kill()
        _ = killed.wait(timeout: 10)
        return partial
    }

    /// The running task's partial file, once it holds bytes.
    private func waitForThePartialFile(of output: URL) throws -> URL {
        let tasks = URL(fileURLWithPath: output.path + ".phone/service/tasks")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: tasks.path)) ?? []
            if let name = names.first(where: { $0.hasSuffix(".part") }), fileSize(tasks.appendingPathComponent(name)) > 0 {
                return tasks.appendingPathComponent(name)
            }
            usleep(10_000)
        }
        throw CocoaError(.fileNoSuchFile)
    }
}
