import Foundation
import LabFixtures
import LabKit
import LabServer
import LabVocabulary
import Testing

/// lesson-02-filehandle, run as a child process against the real embedded server: its article's
/// own defect. The checks it shares with lessons 03 and 04 are in `ResumingLessonsTests`.
@Suite(.serialized)
final class Lesson02Tests {
    let lesson: ResumableLesson

    init() throws {
        lesson = try ResumableLesson("lesson-02-filehandle")
    }

    /// The article's "bytes:N-" really goes on the wire; the server ignores it and sends the whole
    /// file with 200, which lands after the partial one.
    @Test func malformedRangeAppendsTheWholeFileToThePartialOne() throws {
        let fixture = Fixture(name: "malformed", size: 8 << 20)
        let article = try lesson.run(.article, fixture, faults: "drop:40pct,ok")
        #expect(article.finished.status == ExitStatus.verificationFailed.rawValue)
        #expect(article.finished.stderr.contains("SHA-256 mismatch"), "\(article.finished.stderr)")

        try #require(article.wire.count == 2, "\(article.wire)")
        let (first, second) = (article.wire[0], article.wire[1])
        let partial = first.bodyBytesSent
        #expect(abs(partial - fixture.size * 40 / 100) <= 64 << 10)
        #expect(first.range == "bytes:0-")
        #expect(second.range == "bytes:\(partial)-")
        #expect(second.ifRange == nil)
        #expect(second.status == 200)
        #expect(second.bodyBytesSent == fixture.size)

        #expect(fileSize(article.output) == partial + fixture.size)
        #expect(try file(article.output, holds: [(fixture, partial), (fixture, fixture.size)]))
        // The total was worked out from the first response only: the second 200 runs past 100%.
        #expect(article.finished.stderr.contains("progress 125%"), "\(article.finished.stderr)")
    }
}
