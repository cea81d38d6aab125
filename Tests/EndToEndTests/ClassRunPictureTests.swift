import Foundation
import LabVocabulary
import Testing

/// The teacher's page draws a stuck student's run under the check, from the exchanges the
/// submission kept; what a submission says stays text, and a run past the bounds is refused.
struct ClassRunPictureTests {
    /// A failing run: a GET that broke, then a 200 appended after it.
    static func run(error: String, samples: Int = 3) -> ComparisonResults.ExchangeTimeline {
        let origin = 1_764_000_000.0
        var broken = HTTPExchange(method: .get, url: "http://127.0.0.1:1/sealed/x/f.bin", status: 200, bodyBytes: 1_000, error: error)
        (broken.startedAt, broken.firstByteAt, broken.endedAt) = (origin, origin + 0.01, origin + 0.05)
        var whole = HTTPExchange(method: .get, url: "http://127.0.0.1:1/sealed/x/f.bin", range: "bytes=1000-", status: 200, bodyBytes: 4_000)
        (whole.startedAt, whole.firstByteAt, whole.endedAt) = (origin + 0.06, origin + 0.07, origin + 0.2)
        return ComparisonResults.ExchangeTimeline(
            origin: origin, faults: "drop:25pct,ignore-range", exchanges: [broken, whole],
            disk: samples == 3 ? [.init(t: 0.03, bytes: 1_000), .init(t: 0.1, bytes: 2_500), .init(t: 0.21, bytes: 5_000)]
                : (0..<samples).map { ComparisonResults.DiskSample(t: Double($0) / 1000, bytes: 1_000) },
            events: [RunEvent(at: origin + 0.055, what: "Resume")], sizeBytes: 4_000)
    }

    @Test func theStuckListDrawsTheStudentsRun() throws {
        let folder = try scratchDirectory()
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        let hostile = "</li><script>alert(5)</script><svg onload=alert(6)>"
        var submission = ClassFixtures.submission(name: "Ada", key: ClassFixtures.key(), fixed: { $0 != "no-206-check" })
        let index = try #require(submission.checks.firstIndex { $0.check == "no-206-check" })
        submission.checks[index].exchanges = Self.run(error: hostile)
        #expect(try ClassHTTP.post(server.submissions, ClassFixtures.json(submission)).status == 200)

        let page = try ClassHTTP.get(server.teacherURL)
        #expect(page.status == 200)
        let stuck = try #require(page.body.components(separatedBy: "<section id=\"stuck\">").dropFirst().first)
        let item = try #require(stuck.components(separatedBy: "data-check=\"03-outputstream/no-206-check\"").dropFirst().first)
        #expect(item.contains("class=\"run-picture\"") && item.contains("data-lane=\"Ada's code\""), "\(item.prefix(3000))")
        #expect(item.contains(">appended after "), "\(item.prefix(3000))")
        #expect(item.contains("data-event=\"Resume\""))
        #expect(!page.body.contains("<script>alert(5)") && !page.body.contains("<svg onload"))

        // A run past the bounds, or kept for a check that holds, is refused whole.
        var flood = ClassFixtures.submission(name: "Bob", key: ClassFixtures.key(), fixed: { $0 != "no-206-check" })
        flood.checks[index].exchanges = Self.run(error: "broke", samples: CheckRecord.mostDiskSamples + 1)
        var passing = ClassFixtures.submission(name: "Bob", key: ClassFixtures.key())
        passing.checks[index].exchanges = Self.run(error: "broke")
        for refused in [flood, passing] {
            let answer = try ClassHTTP.post(server.submissions, ClassFixtures.json(refused))
            #expect(answer.status == 400 && answer.body.hasPrefix("a check's run is more than a failing check's picture holds"), "\(answer)")
        }
        #expect(try server.stored().grid.students == ["Ada"])
    }
}
