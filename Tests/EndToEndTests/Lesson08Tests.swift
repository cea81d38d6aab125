import Foundation
import LabFixtures
import LabKit
import LabPlatform
import LabServer
import LabVocabulary
import Testing

/// lesson-08-async-await, run as a child process against the real embedded server: its article,
/// which starts over, and the corrected variant's other ways. The checks it shares with lessons
/// 02 to 04 (Range, If-Range, 206, a full disk, memory) are in `ResumingLessonsTests`.
@Suite(.serialized)
final class Lesson08Tests {
    let lesson: ResumableLesson

    init() throws {
        lesson = try ResumableLesson("lesson-08-async-await")
    }

    /// `data(from:)` keeps nothing of a broken transfer: the second GET asks for the whole file.
    @Test func articleDownloadsEverythingAgainAfterADrop() throws {
        let fixture = Fixture(name: "again", size: 8 << 20)
        let article = try lesson.run(.article, fixture, faults: "drop:40pct,ok")
        #expect(article.finished.status == 0, "\(article.finished.stderr)")
        try #require(article.gets.count == 2, "\(article.wire)")
        #expect(article.gets.allSatisfy { $0.range == nil })
        #expect(article.gets[1].status == 200)
        #expect(article.gets[1].bodyBytesSent == fixture.size)
        let result = try article.finished.result()
        #expect(result.verified)
        #expect(result.bytesDownloadedAgain == article.gets[0].bodyBytesSent)
        #expect(abs(result.bytesDownloadedAgain - fixture.size * 40 / 100) <= 64 << 10)
    }

    /// Read one byte at a time, the body is the same, and the resume works the same.
    @Test func byteByByteWritesTheSameFileAndResumes() throws {
        let fixture = Fixture(name: "bytewise", size: 2 << 20 + 777)
        let download = try lesson.run(.corrected, fixture, faults: "drop:40pct,ok", extra: ["--way", "byte-by-byte"])
        #expect(download.finished.status == 0, "\(download.finished.stderr)")
        #expect(try FileDigest.sha256Hex(of: download.output) == fixture.sha256Hex())
        try #require(download.gets.count == 2, "\(download.wire)")
        let resumedAt = download.gets[0].bodyBytesSent
        #expect(download.gets[1].range == "bytes=\(resumedAt)-")
        #expect(download.gets[1].ifRange == fixture.etag)
        #expect(try download.finished.result().way == AsyncAwaitWay.byteByByte.rawValue)
    }

    /// The Pause button cancels the transfer's Task at 25%: the transfer stops, what was already
    /// on its way is kept, and the resume continues right after it.
    @Test func pauseStopsTheTransferAndKeepsWhatArrived() throws {
        let fixture = Fixture(name: "paused", size: 64 << 20)
        let download = try lesson.run(.corrected, fixture, faults: nil,
                                      extra: ["--way", "pause", "--sha256", fixture.sha256Hex()])
        #expect(download.finished.status == 0, "\(download.finished.stderr)")
        #expect(download.finished.stderr.contains("  pause at "), "\(download.finished.stderr)")
        try #require(download.gets.count == 2, "\(download.wire)")
        let (paused, resumed) = (download.gets[0], download.gets[1])
        #expect(paused.bodyBytesSent < fixture.size * 3 / 4, "the paused transfer sent \(paused.bodyBytesSent) bytes")
        #expect(resumed.range?.hasPrefix("bytes=") == true)
        #expect(resumed.status == 206)
        // What crossed the wire for nothing: the server's buffers when the connection closed.
        let again = paused.bodyBytesSent + resumed.bodyBytesSent - fixture.size
        #expect(again <= 1 << 20, "\(again) bytes downloaded again")
        let result = try download.finished.result()
        #expect(result.verified)
        // Every byte the lesson received was kept: the resume starts right after them.
        #expect(result.bytesReceived == fixture.size)
        #expect(result.resumedFrom.count == 1)
        #expect(result.resumedFrom.first.map { $0 >= fixture.size / 4 } == true)
        // The press is on the run's picture: between the two requests.
        let press = try #require(result.events?.first { $0.what == "Pause" }, "\(result.events ?? [])")
        #expect(result.requests.count == 2 && result.requests[1].startedAt.map { press.at <= $0 } == true)
    }

    /// `download(for:)`: a failed attempt's temporary file is deleted, a successful one moved,
    /// and nothing is left in the temporary folder the lesson was given.
    @Test func downloadWayLeavesNoTemporaryFileBehind() throws {
        let temporary = lesson.directory.appendingPathComponent("tmp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let fixture = Fixture(name: "download", size: 4 << 20)
        let url = lesson.server.url(for: fixture, faults: "drop:40pct,ok", run: UUID().uuidString)
        let output = lesson.directory.appendingPathComponent("\(UUID().uuidString).bin")
        let executable = ChildProcess.buildDirectory.appendingPathComponent("lesson-08-async-await").path
        let finished = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"), [
            "TMPDIR=\(temporary.path)", executable, "--way", "download", "--url", url.absoluteString,
            "--output", output.path, "--json",
        ])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
        // A Linux fact: Foundation there leaves a failed download's file in the temporary folder.
        if Platform.isLinux {
            let deleted = finished.stderr.split(separator: "\n").filter { $0.contains("Foundation left ") }
            #expect(deleted.count == 1, "\(finished.stderr)")
            #expect(deleted.first?.hasSuffix(".tmp: deleting it") == true)
        }
        let left = FileManager.default.enumerator(atPath: temporary.path)?.allObjects as? [String] ?? []
        #expect(left.filter { $0.hasSuffix(".tmp") }.isEmpty, "\(left)")
        #expect(!left.contains { $0.hasPrefix("download-lab-\(getuid())/tmp/lesson-08-") }, "\(left)")
    }

    /// The download way checks the status too: an error page is never moved into place.
    @Test func downloadWayRefusesAnErrorPage() throws {
        let fixture = Fixture(name: "download-404", size: 1 << 20)
        let refused = try lesson.run(.corrected, fixture, faults: "status:404", extra: ["--way", "download", "--quiet"])
        #expect(refused.finished.status == ExitStatus.transferFailed.rawValue)
        #expect(refused.finished.stderr == "lesson-08-async-await: HTTP 404 Not Found from \(refused.url.absoluteString)\n")
        #expect(!FileManager.default.fileExists(atPath: refused.output.path))
    }

    /// The ways are the corrected variant's: asking the article for one is a usage error.
    @Test func articleHasNoWays() throws {
        let finished = try ChildProcess.run("lesson-08-async-await", ["--variant", "article", "--way", "pause"])
        #expect(finished.status == ExitStatus.usage.rawValue)
        #expect(finished.stderr == "lesson-08-async-await: --way: the article variant has one way; "
            + "the ways are the corrected variant's\n")
    }
}
