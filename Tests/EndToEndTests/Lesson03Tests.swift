import Foundation
import LabFixtures
import LabKit
import LabServer
import LabVocabulary
import Testing

/// lesson-03-outputstream, run as a child process against the real embedded server: lesson 03's
/// own checks, the article's HEAD and what each fault does to the article's file. The checks it
/// shares with lessons 02 and 04 are in `ResumingLessonsTests`.
@Suite(.serialized)
final class Lesson03Tests {
    let lesson: ResumableLesson
    var server: LabServer { lesson.server }
    var directory: URL { lesson.directory }

    init() throws { lesson = try ResumableLesson("lesson-03-outputstream") }

    @Test(arguments: Variant.allCases)
    func cleanDownloadVerifies(variant: Variant) throws {
        let fixture = Fixture(name: "clean", size: 3_000_017)
        let download = try lesson.run(variant, fixture, faults: nil)
        #expect(download.finished.status == 0, "\(download.finished.stderr)")
        let result = try download.finished.result()
        #expect(result.outcome == .verified)
        #expect(result.actualSHA256 == fixture.sha256Hex())
        #expect(try FileDigest.sha256Hex(of: download.output) == fixture.sha256Hex())
        #expect(result.fileBytes == fixture.size)
        #expect(result.attempts == 1)
        #expect(result.resumedFrom.isEmpty)
        // The article asks HEAD first; the corrected variant goes straight to GET.
        #expect(result.requests.map(\.method) == (variant == .article ? [.head, .get] : [.get]))
    }

    @Test func sameSizeIsNotProofOfTheSameFile() throws {
        let fixture = Fixture(name: "same-size", size: 1 << 20)
        let changed = Fixture(name: "same-size", size: 1 << 20, generation: 1)
        for variant in Variant.allCases {
            // The server's file changes (same size) between the first and the second download.
            let token = "same-size-\(variant)"
            let first = try lesson.run(variant, fixture, faults: "ok,change", token: token)
            #expect(first.finished.status == 0, "\(first.finished.stderr)")

            let second = try lesson.run(variant, fixture, faults: "ok,change", token: token)
            let result = try second.finished.result()
            switch variant {
            case .article:
                #expect(second.finished.status == ExitStatus.verificationFailed.rawValue)
                #expect(second.finished.stderr.contains("the file is already downloaded"))
                #expect(result.requests.map(\.method) == [.head])
                #expect(result.actualSHA256 == fixture.sha256Hex())
            case .corrected:
                #expect(second.finished.status == 0, "\(second.finished.stderr)")
                #expect(result.actualSHA256 == changed.sha256Hex())
            }
        }
    }

    @Test func fullDiskGoesUnnoticedByTheArticle() throws {
        let fixture = Fixture(name: "disk-full", size: 4 << 20)
        let article = try lesson.run(.article, fixture, faults: nil, extra: ["--disk-full-after", "1MiB"])
        // The failed writes went unnoticed: "download finished", then a short, wrong file.
        #expect(article.finished.status == ExitStatus.verificationFailed.rawValue)
        #expect(article.finished.stderr.contains("download finished"))
        #expect(fileSize(article.output) == 1 << 20)
    }

    @Test func outputThatIsNotARegularFileIsRefused() throws {
        let finished = try ChildProcess.run("lesson-03-outputstream", ["--output", "/dev/zero", "--quiet"])
        #expect(finished.status == ExitStatus.localIOFailed.rawValue)
        #expect(finished.stderr == "lesson-03-outputstream: cannot write /dev/zero: it is a device; only a new path or a regular file is written\n")
    }

    /// The article never looks at the status: it saves the error page as the file.
    @Test func notFoundPageIsSavedByTheArticle() throws {
        let fixture = Fixture(name: "error", size: 1 << 20)
        let article = try lesson.run(.article, fixture, faults: "status:404", extra: ["--sha256", fixture.sha256Hex()])
        #expect(article.finished.status == ExitStatus.verificationFailed.rawValue)
        #expect(article.finished.stderr.contains("download finished"))
        #expect(try String(contentsOf: article.output, encoding: .utf8).hasPrefix("404 Not Found"))
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
        #expect(finished.stdout.contains("USAGE: lesson-03-outputstream <options>"))
        #expect(finished.stdout.contains("--max-time <max-time>"))
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
}
