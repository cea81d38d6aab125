import LabReport
import LabVocabulary
import Testing

/// The measured section of a lesson page: written between its markers, from the results alone.
struct MeasuredSectionTests {
    static let page = """
        # Lesson 03

        ## Measured

        \(MeasuredSection.begin)
        old figures, typed by hand
        \(MeasuredSection.end)

        ## Exercises
        """

    @Test func onlyTheTextBetweenTheMarkersIsReplaced() throws {
        let updated = try MeasuredSection.replacing(in: Self.page, named: "03.md", with: "| a | b |")
        #expect(updated == Self.page.replacingOccurrences(of: "old figures, typed by hand", with: "| a | b |"))
        // Writing it twice gives the same page: nothing piles up between the markers.
        #expect(try MeasuredSection.replacing(in: updated, named: "03.md", with: "| a | b |") == updated)
    }

    @Test func aPageWithoutMarkersIsRefused() {
        #expect(throws: MeasuredSection.Problem.self) {
            try MeasuredSection.replacing(in: "# Lesson 03\n\n## Measured\n", named: "03.md", with: "x")
        }
        #expect(throws: MeasuredSection.Problem.self) {
            try MeasuredSection.replacing(in: "\(MeasuredSection.begin)\nno end\n", named: "03.md", with: "x")
        }
    }

    @Test func theSectionTellsEachOutcomeAndItsCauseFromTheResults() throws {
        let text = try MeasuredSection.markdown(for: .outputStream, from: ReportFixture.results())
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("| variant | clean | drop-resume | kill-rerun | ignore-range |"))
        #expect(lines.contains("| article | pass | pass | pass | fail (expected) |"))
        #expect(lines.contains("| corrected | pass | fail | pass | pass |"))
        #expect(lines.contains("- article, ignore-range, 32 MiB: verification failed: SHA-256 mismatch, a 200 reply was appended; 12.8 MiB downloaded again"))
        #expect(lines.contains { $0.hasPrefix("| 256 MiB | corrected | ") })
        #expect(lines.contains("curl fetched 256 MiB in the same run at 600 MiB/s."))
    }

    /// A second launch that passed says whether the file was kept or downloaded again.
    @Test func aSecondLaunchSaysWhetherItKeptTheFile() throws {
        var results = ReportFixture.results()
        let size: Int64 = 16 << 20
        results.runs += [
            ReportFixture.run("03-outputstream", "OutputStream", .article, .relaunch, size),
            ReportFixture.run("03-outputstream", "OutputStream", .corrected, .relaunch, size, again: size),
        ]
        let lines = try MeasuredSection.markdown(for: .outputStream, from: results).split(separator: "\n").map(String.init)
        #expect(lines.contains("| variant | clean | drop-resume | kill-rerun | ignore-range | relaunch |"))
        #expect(lines.contains("| article | pass | pass | pass | fail (expected) | pass, kept |"))
        #expect(lines.contains("| corrected | pass | fail | pass | pass | pass, downloaded again |"))
    }

    /// Runs over a network profile (`--full` has them) belong to the report's slow-network section,
    /// not to the page's loopback tables: their sizes and outcomes would read as loopback ones.
    @Test func runsOverANetworkStayOffThePage() throws {
        var results = ReportFixture.results()
        var overLink = ReportFixture.run("03-outputstream", "OutputStream", .corrected, .clean, 256 << 10, throughput: 80_000)
        overLink.network = .threeG
        var failedOverLink = ReportFixture.run("03-outputstream", "OutputStream", .corrected, .ignoreRange, 256 << 10,
                                               status: .fail, cause: "timed out")
        failedOverLink.network = .threeG
        results.runs += [overLink, failedOverLink]
        #expect(try MeasuredSection.markdown(for: .outputStream, from: results)
                == MeasuredSection.markdown(for: .outputStream, from: ReportFixture.results()))
        // Only over a network: the lesson has no loopback runs to show.
        results.runs = [overLink]
        #expect(throws: MeasuredSection.Problem.self) { try MeasuredSection.markdown(for: .outputStream, from: results) }
    }

    @Test func aLessonTheResultsDoNotHaveIsAnError() {
        #expect(throws: MeasuredSection.Problem.self) {
            try MeasuredSection.markdown(for: .asyncAwait, from: ReportFixture.results())
        }
    }
}
