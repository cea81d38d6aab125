import Foundation
import LabKit
import LabServer
import Testing

/// lesson-03-outputstream, run as a child process against the real embedded server.
@Suite(.serialized)
final class Lesson03Tests {
    private let bench: TestBench
    var server: LabServer { bench.server }
    var directory: URL { bench.directory }

    init() throws { bench = try TestBench() }

    private func lesson(_ variant: Variant, _ fixture: Fixture, faults: String?, extra: [String] = []) throws
        -> (ChildProcess.Finished, URL) {
        let output = directory.appendingPathComponent("\(variant)-\(UUID().uuidString).bin")
        let url = server.url(for: fixture, faults: faults, run: UUID().uuidString)
        let finished = try ChildProcess.run(
            "lesson-03-outputstream",
            ["--url", url.absoluteString, "--output", output.path, "--variant", variant.rawValue, "--json"] + extra)
        return (finished, output)
    }

    @Test(arguments: Variant.allCases)
    func cleanDownloadVerifies(variant: Variant) throws {
        let fixture = Fixture(name: "clean", size: 3_000_017)
        let (finished, output) = try lesson(variant, fixture, faults: nil)
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.outcome == .verified)
        #expect(result.actualSHA256 == fixture.sha256Hex())
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
        #expect(result.fileBytes == fixture.size)
        #expect(result.attempts == 1)
        #expect(result.resumedFrom.isEmpty)
        // The article asks HEAD first; the corrected variant goes straight to GET.
        #expect(result.requests.map(\.method) == (variant == .article ? ["HEAD", "GET"] : ["GET"]))
    }

    @Test(arguments: Variant.allCases)
    func dropAt40PercentResumesWithRange(variant: Variant) throws {
        let fixture = Fixture(name: "drop", size: 8 << 20)
        let (finished, _) = try lesson(variant, fixture, faults: "drop:40pct,ok")
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.verified)
        #expect(result.attempts == 2)
        let cut = fixture.size * 40 / 100
        #expect(result.resumedFrom.count == 1)
        #expect(abs(result.resumedFrom[0] - cut) <= 64 << 10)
        #expect(result.bytesDownloadedAgain <= 64 << 10)
        let resume = try #require(result.requests.last)
        #expect(resume.status == 206)
        #expect(resume.range == "bytes=\(result.resumedFrom[0])-")
        #expect(resume.contentRange == "bytes \(result.resumedFrom[0])-\(fixture.size - 1)/\(fixture.size)")
        if variant == .corrected { #expect(resume.ifRange == fixture.etag) }
    }

    @Test func ignoredRangeIsCaughtOnlyByTheCorrectedVariant() throws {
        let fixture = Fixture(name: "ignored", size: 4 << 20)

        let (corrected, correctedFile) = try lesson(.corrected, fixture, faults: "drop:40pct,ignore-range")
        #expect(corrected.status == 0, "\(corrected.stderr)")
        #expect(try corrected.result().verified)
        #expect(fileSize(correctedFile) == fixture.size)

        let (article, articleFile) = try lesson(.article, fixture, faults: "drop:40pct,ignore-range")
        #expect(article.status == ExitStatus.verificationFailed.rawValue)
        #expect(article.stderr.contains("SHA-256 mismatch"), "\(article.stderr)")
        // The whole file was appended after the partial one.
        #expect(fileSize(articleFile) > fixture.size)
    }

    @Test func changedEntityMakesTheCorrectedVariantStartOver() throws {
        let fixture = Fixture(name: "changing", size: 4 << 20)
        let changed = Fixture(name: "changing", size: 4 << 20, generation: 1)
        #expect(changed.sha256Hex() != fixture.sha256Hex())

        let (corrected, correctedFile) = try lesson(.corrected, fixture, faults: "drop:40pct,change")
        #expect(corrected.status == 0, "\(corrected.stderr)")
        let result = try corrected.result()
        #expect(result.actualSHA256 == changed.sha256Hex())
        #expect(try FileDigest.sha256Hex(of: correctedFile) == changed.sha256Hex())
        #expect(result.requests.last?.status == 200)

        let (article, articleFile) = try lesson(.article, fixture, faults: "drop:40pct,change")
        #expect(article.status == ExitStatus.verificationFailed.rawValue)
        // Spliced: old bytes, then the new version's tail. Same length, wrong content.
        #expect(fileSize(articleFile) == fixture.size)
    }

    @Test func sameSizeIsNotProofOfTheSameFile() throws {
        let fixture = Fixture(name: "same-size", size: 1 << 20)
        let changed = Fixture(name: "same-size", size: 1 << 20, generation: 1)
        for variant in Variant.allCases {
            // The server's file changes (same size) between the first and the second download.
            let url = server.url(for: fixture, faults: "ok,change", run: "same-size-\(variant)")
            let output = directory.appendingPathComponent("same-size-\(variant).bin")
            let arguments = ["--url", url.absoluteString, "--output", output.path, "--variant", variant.rawValue, "--json"]
            let first = try ChildProcess.run("lesson-03-outputstream", arguments)
            #expect(first.status == 0, "\(first.stderr)")

            let second = try ChildProcess.run("lesson-03-outputstream", arguments)
            let result = try second.result()
            switch variant {
            case .article:
                #expect(second.status == ExitStatus.verificationFailed.rawValue)
                #expect(second.stderr.contains("the file is already downloaded"))
                #expect(result.requests.map(\.method) == ["HEAD"])
                #expect(result.actualSHA256 == fixture.sha256Hex())
            case .corrected:
                #expect(second.status == 0, "\(second.stderr)")
                #expect(result.actualSHA256 == changed.sha256Hex())
            }
        }
    }

    @Test func fullDiskIsCaughtOnlyByTheCorrectedVariant() throws {
        let fixture = Fixture(name: "disk-full", size: 4 << 20)
        let url = server.url(for: fixture, faults: nil, run: "disk-full")
        let output = directory.appendingPathComponent("disk-full.bin")
        let corrected = ["--url", url.absoluteString, "--output", output.path, "--json"]

        let full = try ChildProcess.run("lesson-03-outputstream", corrected + ["--disk-full-after", "1MiB"])
        #expect(full.status == ExitStatus.localIOFailed.rawValue)
        #expect(full.stderr.contains("cannot write \(output.path)"), "\(full.stderr)")
        #expect(fileSize(output) == 1 << 20)
        #expect(ResumeState.load(for: output)?.total == fixture.size)

        // With room on the disk again, the partial file resumes where it stopped.
        let resumed = try ChildProcess.run("lesson-03-outputstream", corrected)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try resumed.result().resumedFrom == [1 << 20])

        let articleOutput = directory.appendingPathComponent("disk-full-article.bin")
        let article = try ChildProcess.run("lesson-03-outputstream", [
            "--url", url.absoluteString, "--output", articleOutput.path, "--variant", "article", "--json",
            "--disk-full-after", "1MiB",
        ])
        // The failed writes went unnoticed: "download finished", then a short, wrong file.
        #expect(article.status == ExitStatus.verificationFailed.rawValue)
        #expect(article.stderr.contains("download finished"))
        #expect(fileSize(articleOutput) == 1 << 20)
    }

    @Test func outputThatIsNotARegularFileIsRefused() throws {
        let finished = try ChildProcess.run("lesson-03-outputstream", ["--output", "/dev/zero", "--quiet"])
        #expect(finished.status == ExitStatus.localIOFailed.rawValue)
        #expect(finished.stderr == "lesson-03-outputstream: cannot write /dev/zero: it exists and is not a regular file\n")
    }

    @Test func rangeThatStartsElsewhereIsNeverAppended() throws {
        let fixture = Fixture(name: "shifted", size: 4 << 20)
        // The resume is answered with a 206 that starts 100 bytes before the partial file ends,
        // as a buggy cache might send.
        let url = server.url(for: fixture, faults: "drop:40pct,shift-range:-100", run: "shifted")
        let output = directory.appendingPathComponent("shifted.bin")
        let arguments = ["--url", url.absoluteString, "--output", output.path, "--json"]

        let refused = try ChildProcess.run("lesson-03-outputstream", arguments)
        #expect(refused.status == ExitStatus.transferFailed.rawValue)
        let result = try refused.result()
        let partial = try #require(result.resumedFrom.first)
        #expect(result.error?.message.hasPrefix(
            "206 response starts at the wrong offset: expected bytes \(partial)-…, got Content-Range: bytes \(partial - 100)-") == true)
        #expect(fileSize(output) == partial)
        #expect(ResumeState.load(for: output) != nil)

        // The partial file was left intact, so the next run (attempt 3 behaves) completes it.
        let resumed = try ChildProcess.run("lesson-03-outputstream", arguments)
        #expect(resumed.status == 0, "\(resumed.stderr)")
        #expect(try resumed.result().resumedFrom == [partial])

        let (article, articleFile) = try lesson(.article, fixture, faults: "drop:40pct,shift-range:-100")
        #expect(article.status == ExitStatus.verificationFailed.rawValue)
        #expect(fileSize(articleFile) == fixture.size + 100)
    }

    @Test func notFoundIsAClearTransferFailure() throws {
        let fixture = Fixture(name: "missing", size: 1 << 20)
        let (finished, _) = try lesson(.corrected, fixture, faults: "status:404", extra: ["--quiet"])
        #expect(finished.status == ExitStatus.transferFailed.rawValue)
        let lines = finished.stderr.split(separator: "\n")
        #expect(lines.count == 1, "\(finished.stderr)")
        #expect(lines.first?.hasPrefix("lesson-03-outputstream: HTTP 404 Not Found from http://127.0.0.1:") == true)
        let result = try finished.result()
        #expect(result.outcome == .transferFailed)
        #expect(result.attempts == 1)

        // The article never looks at the status: it saves the error page as the file.
        let (article, articleFile) = try lesson(.article, fixture, faults: "status:404",
                                                extra: ["--sha256", fixture.sha256Hex()])
        #expect(article.status == ExitStatus.verificationFailed.rawValue)
        #expect(article.stderr.contains("download finished"))
        #expect(try String(contentsOf: articleFile, encoding: .utf8).hasPrefix("404 Not Found"))
    }

    @Test func completeFileWithLeftoverSidecarIsConfirmedBy416() throws {
        let fixture = Fixture(name: "complete", size: 1_000_003)
        let url = server.url(for: fixture, faults: nil, run: "416")
        let output = directory.appendingPathComponent("complete.bin")
        try writeFixture(fixture, prefix: fixture.size, to: output)
        try ResumeState(url: url.absoluteString, validator: fixture.etag, total: fixture.size).save(for: output)

        let finished = try ChildProcess.run(
            "lesson-03-outputstream", ["--url", url.absoluteString, "--output", output.path, "--json"])
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.verified)
        #expect(result.requests.map(\.status) == [416])
        #expect(result.bytesReceived == 0)
        #expect(!FileManager.default.fileExists(atPath: ResumeState.sidecar(for: output).path))
    }

    @Test func partialFileLongerThanTheServersIsReplaced() throws {
        let fixture = Fixture(name: "shrunk", size: 500_000)
        let url = server.url(for: fixture, faults: nil, run: "longer")
        let output = directory.appendingPathComponent("longer.bin")
        try writeFixture(fixture, prefix: fixture.size, to: output)
        let handle = try FileHandle(forWritingTo: output)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 7, count: 1000))
        try handle.close()
        try ResumeState(url: url.absoluteString, validator: fixture.etag, total: fixture.size + 1000).save(for: output)

        let finished = try ChildProcess.run(
            "lesson-03-outputstream", ["--url", url.absoluteString, "--output", output.path, "--json"])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(try finished.result().requests.map(\.status) == [416, 200])
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
    }

    @Test(arguments: [
        (["--variant", "bogus"], "--variant"),
        (["--url", "ftp://example.com/x"], "--url must be an http:// or https:// URL"),
        (["--sha256", "abc"], "--sha256 must be 64 hexadecimal digits"),
        (["--faults", "drop:lots"], "--faults"),
        (["--size", "huge"], "--size"),
        (["--disk-full-after", "lots"], "--disk-full-after"),
        (["--url", "http://127.0.0.1:1/x", "--faults", "ok"], "--size and --faults apply to the embedded server only"),
    ])
    func badInputGetsOneLineAndExit64(arguments: [String], message: String) throws {
        let finished = try ChildProcess.run("lesson-03-outputstream", arguments)
        #expect(finished.status == ExitStatus.usage.rawValue)
        #expect(finished.stderr.split(separator: "\n").count == 1, "\(finished.stderr)")
        #expect(finished.stderr.contains(message), "\(finished.stderr)")
        #expect(finished.stdout.isEmpty)
    }

    @Test func helpNamesTheExecutable() throws {
        let finished = try ChildProcess.run("lesson-03-outputstream", ["--help"])
        #expect(finished.status == 0)
        #expect(finished.stdout.hasPrefix("lesson-03-outputstream: OutputStream append, resumed with Range\n"))
        #expect(finished.stdout.contains("USAGE: lesson-03-outputstream [--url <url>]"))
    }

    @Test func unreachableServerIsATransferFailure() throws {
        let output = directory.appendingPathComponent("unreachable.bin")
        let finished = try ChildProcess.run(
            "lesson-03-outputstream", ["--url", "http://127.0.0.1:1/file", "--output", output.path])
        #expect(finished.status == ExitStatus.transferFailed.rawValue)
        #expect(finished.stderr.split(separator: "\n").count == 1, "\(finished.stderr)")
    }

    /// The default run, exactly as `swift run lesson-03-outputstream` does it.
    @Test func noArgumentsTellsTheWholeStory() throws {
        let finished = try ChildProcess.run("lesson-03-outputstream", [])
        #expect(finished.status == 0, "\(finished.stderr)")
        let story = finished.stdout
        #expect(story.contains("→ GET /fixtures/lesson-03-outputstream?size=67108864"))
        #expect(story.contains("✗ attempt 1 failed"))
        #expect(story.contains("↻ attempt 2: Resume"))
        #expect(story.contains("Range: bytes=26843545-  If-Range: \""))
        #expect(story.contains("← 206 Partial Content  Content-Range: bytes 26843545-67108863/67108864"))
        #expect(story.contains("✔ verified: SHA-256 \(Fixture(name: "lesson-03-outputstream", size: 64 << 20).sha256Hex())"))
        #expect(story.contains("resumed from      byte 26,843,545"))
        #expect(story.contains("downloaded twice  0 bytes"))
        #expect(finished.stderr.isEmpty)
    }

    /// Backpressure: a slow disk must slow the transfer down, not fill memory.
    /// Without a bound, a 100 µs write delay took this download to 852 MB.
    @Test func oneGibibyteWithASlowDiskStaysUnder96MB() throws {
        let fixture = Fixture(name: "big", size: 1 << 30)
        let (finished, output) = try lesson(.corrected, fixture, faults: nil,
                                            extra: ["--write-delay-us", "100", "--sha256", fixture.sha256Hex()])
        defer { try? FileManager.default.removeItem(at: output) }
        #expect(finished.status == 0, "\(finished.stderr)")
        let result = try finished.result()
        #expect(result.verified)
        #expect(result.peakRSSBytes < 96_000_000, "peak RSS \(result.peakRSSBytes)")
    }
}
