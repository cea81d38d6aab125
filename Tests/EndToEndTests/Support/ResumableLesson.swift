import Foundation
import LabFixtures
import LabKit
import LabServer
import LabVocabulary
import Testing

/// Whether `file` holds exactly `pieces`, one after another, each the first `count` bytes of its fixture.
func file(_ url: URL, holds pieces: [(fixture: Fixture, count: Int64)]) throws -> Bool {
    let handle = try FileHandle(forReadingFrom: url)
    defer { try? handle.close() }
    var expected = Data(count: 1 << 20)
    for (fixture, count) in pieces {
        var offset: Int64 = 0
        while offset < count {
            let length = Int(min(Int64(expected.count), count - offset))
            expected.withUnsafeMutableBytes { fixture.fill(UnsafeMutableRawBufferPointer(rebasing: $0[0..<length]), from: offset) }
            guard try handle.read(upToCount: length) == expected.prefix(length) else { return false }
            offset += Int64(length)
        }
    }
    return try handle.read(upToCount: 1) == nil
}

/// A lesson whose corrected variant resumes through `PartialFile` (lessons 02, 03, 04 and 08), with a
/// server and a scratch folder of its own, and the checks each such lesson must pass. Each check
/// is one test in `ResumingLessonsTests`, run once per lesson.
final class ResumableLesson {
    let executable: String
    private let bench: TestBench
    var server: LabServer { bench.server }
    var directory: URL { bench.directory }

    init(_ executable: String) throws {
        self.executable = executable
        bench = try TestBench()
    }

    /// One run of the lesson executable and what it left behind.
    struct Run {
        let url: URL
        let output: URL
        let finished: ChildProcess.Finished
        /// This run's requests as the server saw them, oldest first.
        let wire: [LoggedRequest]
        /// Its GETs only: a lesson may ask HEAD first (lesson 03's article does).
        var gets: [LoggedRequest] { wire.filter { $0.method == .get } }
    }

    /// Runs the lesson with `--json` against `fixture`, served with `faults`. Runs with the same
    /// `token` share the output file and the server's attempt counter: a second run finds what
    /// the first one left on disk and plays the fault script's next attempt.
    func run(_ variant: Variant, _ fixture: Fixture, faults: String?, token: String = UUID().uuidString,
             extra: [String] = []) throws -> Run {
        let url = server.url(for: fixture, faults: faults, run: token)
        let output = directory.appendingPathComponent("\(token).bin")
        let requestsBefore = server.requestLog.count
        let finished = try ChildProcess.run(
            executable,
            ["--url", url.absoluteString, "--output", output.path, "--variant", variant.rawValue, "--json"] + extra)
        return Run(url: url, output: output, finished: finished, wire: Array(server.requestLog.dropFirst(requestsBefore)))
    }

    /// The default run: the lesson's own embedded server, 64 MiB, a drop at 40%, then a resume.
    func checkDefaultRun() throws {
        let output = directory.appendingPathComponent("default.bin")
        let finished = try ChildProcess.run(executable, ["--json", "--output", output.path])
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        let fixture = Fixture(name: executable, size: 64 << 20)
        #expect(result.variant == .corrected)
        #expect(result.outcome == .verified)
        #expect(result.attempts == 2)
        #expect(result.resumedFrom.count == 1)
        #expect(result.actualSHA256 == fixture.sha256Hex())
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
    }

    func checkDropResumes(_ variant: Variant) throws {
        let fixture = Fixture(name: "drop", size: 8 << 20)
        let download = try run(variant, fixture, faults: "drop:40pct,ok")
        #expect(download.finished.status == 0, "\(download.finished.stderr)")
        let result = try download.finished.result()
        #expect(result.verified)
        #expect(result.attempts == 2)
        #expect(result.bytesDownloadedAgain <= 64 << 10)
        #expect(fileSize(download.output) == fixture.size)

        try #require(result.resumedFrom.count == 1)
        let offset = result.resumedFrom[0]
        #expect(abs(offset - fixture.size * 40 / 100) <= 64 << 10)
        try #require(download.gets.count == 2, "\(download.wire)")
        // Everything the first attempt received is kept: the resume starts right after it.
        #expect(offset == download.gets[0].bodyBytesSent)
        let resume = download.gets[1]
        #expect(resume.range == "bytes=\(offset)-")
        // Only the corrected variant makes the resume conditional.
        #expect(resume.ifRange == (variant == .corrected ? fixture.etag : nil))
        #expect(resume.status == 206)
        #expect(resume.bodyBytesSent == fixture.size - offset)
        #expect(result.requests.last?.contentRange == "bytes \(offset)-\(fixture.size - 1)/\(fixture.size)")
    }

    /// `articleAppends`: the article resumes by appending whatever comes (lessons 02 to 04); the
    /// others ask for the whole file again and are not fooled.
    func checkIgnoredRange(articleAppends: Bool) throws {
        let fixture = Fixture(name: "ignored", size: 4 << 20)

        let corrected = try run(.corrected, fixture, faults: "drop:40pct,ignore-range")
        #expect(corrected.finished.status == 0, "\(corrected.finished.stderr)")
        #expect(try corrected.finished.result().verified)
        #expect(corrected.finished.stderr.contains("the server sent the whole file (200): starting over from byte 0"))
        #expect(corrected.wire.map(\.status) == [200, 200])
        #expect(fileSize(corrected.output) == fixture.size)
        #expect(try FileDigest.sha256Hex(of: corrected.output) == fixture.sha256Hex())

        let article = try run(.article, fixture, faults: "drop:40pct,ignore-range")
        guard articleAppends else {
            #expect(article.finished.status == 0, "\(article.finished.stderr)")
            #expect(try FileDigest.sha256Hex(of: article.output) == fixture.sha256Hex())
            return
        }
        #expect(article.finished.status == ExitStatus.verificationFailed.rawValue)
        #expect(article.finished.stderr.contains("SHA-256 mismatch"), "\(article.finished.stderr)")
        // The whole file was appended after the partial one.
        let partial = try #require(article.gets.first?.bodyBytesSent)
        #expect(partial > 0)
        #expect(fileSize(article.output) == partial + fixture.size)
    }

    func checkChangedEntity() throws {
        let fixture = Fixture(name: "changing", size: 4 << 20)
        let changed = Fixture(name: "changing", size: 4 << 20, generation: 1)
        #expect(changed.sha256Hex() != fixture.sha256Hex())

        let corrected = try run(.corrected, fixture, faults: "drop:40pct,change")
        #expect(corrected.finished.status == 0, "\(corrected.finished.stderr)")
        let result = try corrected.finished.result()
        #expect(result.verified)
        #expect(result.actualSHA256 == changed.sha256Hex())
        #expect(try FileDigest.sha256Hex(of: corrected.output) == changed.sha256Hex())
        #expect(result.requests.last?.status == 200)
        // The old ETag no longer matches, so the server answered the resume with all of the new file.
        let resume = try #require(corrected.wire.last)
        #expect(resume.ifRange == fixture.etag)
        #expect(resume.status == 200)
        #expect(resume.bodyBytesSent == changed.size)
    }

    func checkHTTPError(status: Int, reason: String) throws {
        let fixture = Fixture(name: "error", size: 1 << 20)
        let corrected = try run(.corrected, fixture, faults: "status:\(status)", extra: ["--quiet"])
        #expect(corrected.finished.status == ExitStatus.transferFailed.rawValue)
        #expect(corrected.finished.stderr == "\(executable): HTTP \(status) \(reason) from \(corrected.url.absoluteString)\n")
        let result = try corrected.finished.result()
        #expect(result.outcome == .transferFailed)
        #expect(result.attempts == 1)
        // The error page is not saved as the file.
        #expect(!FileManager.default.fileExists(atPath: corrected.output.path))
    }

    /// The resume is answered with a 206 that starts 100 bytes before the partial file ends, as a
    /// buggy cache might send.
    func checkShiftedRange() throws {
        let fixture = Fixture(name: "shifted", size: 4 << 20)
        let refused = try run(.corrected, fixture, faults: "drop:40pct,shift-range:-100", token: "shifted")
        #expect(refused.finished.status == ExitStatus.transferFailed.rawValue)
        let partial = try #require(refused.finished.result().resumedFrom.first)
        #expect(refused.finished.stderr.contains(
            "206 response starts at the wrong offset: expected bytes \(partial)-…, "
                + "got Content-Range: bytes \(partial - 100)-\(fixture.size - 1)/\(fixture.size) "
                + "(partial file kept at \(refused.output.path))"),
            "\(refused.finished.stderr)")
        #expect(try refused.finished.result().error?.message.hasPrefix(
            "206 response starts at the wrong offset: expected bytes \(partial)-…, got Content-Range: bytes \(partial - 100)-") == true)
        #expect(fileSize(refused.output) == partial)
        #expect(ResumeState.load(for: refused.output)
            == ResumeState(url: refused.url.absoluteString, validator: fixture.etag, total: fixture.size))

        // The partial file was left intact, so the next run (attempt 3 behaves) completes it.
        let resumed = try run(.corrected, fixture, faults: "drop:40pct,shift-range:-100", token: "shifted")
        #expect(resumed.finished.status == 0, "\(resumed.finished.stderr)")
        let result = try resumed.finished.result()
        #expect(result.verified)
        #expect(result.resumedFrom == [partial])
    }

    func checkFullDisk() throws {
        let fixture = Fixture(name: "disk-full", size: 4 << 20)
        let full = try run(.corrected, fixture, faults: nil, token: "disk-full", extra: ["--disk-full-after", "1MiB"])
        #expect(full.finished.status == ExitStatus.localIOFailed.rawValue)
        #expect(full.finished.stderr.contains("\(executable): cannot write \(full.output.path)"), "\(full.finished.stderr)")
        #expect(try full.finished.result().outcome == .ioFailed)
        #expect(fileSize(full.output) == 1 << 20)
        #expect(ResumeState.load(for: full.output)?.total == fixture.size)

        // With room on the disk again, the partial file resumes where it stopped.
        let resumed = try run(.corrected, fixture, faults: nil, token: "disk-full")
        #expect(resumed.finished.status == 0, "\(resumed.finished.stderr)")
        let result = try resumed.finished.result()
        #expect(result.verified)
        #expect(result.resumedFrom == [1 << 20])
        #expect(!FileManager.default.fileExists(atPath: ResumeState.sidecar(for: resumed.output).path))
    }

    /// Backpressure: a slow disk must slow the transfer down, not fill memory. 256 MiB shows it:
    /// without a bound, the body waiting for the disk grows with the file, past 200 MB here.
    func checkMemory() throws {
        let fixture = Fixture(name: "big", size: 256 << 20)
        let corrected = try run(.corrected, fixture, faults: nil,
                                extra: ["--write-delay-us", "100", "--sha256", fixture.sha256Hex()])
        defer { try? FileManager.default.removeItem(at: corrected.output) }
        #expect(corrected.finished.status == 0, "\(corrected.finished.stderr)")
        let result = try corrected.finished.result()
        #expect(result.verified)
        #expect(result.peakRSSBytes < 96_000_000, "peak RSS \(result.peakRSSBytes)")
    }
}
