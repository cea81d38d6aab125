@testable import LabReport
import LabVocabulary
import Testing

/// The sentence above the connections chart: the ratios at 4 connections, and the first doubling
/// that gained less than a quarter.
struct ConnectionsFindingTests {
    private func runs(_ program: ConnectionsProgram, seconds: [Double]) -> [ComparisonResults.ConnectionsRun] {
        zip([1, 2, 4, 8], seconds).map { count, wall in
            ComparisonResults.ConnectionsRun(program: program, server: .lab, connections: count, sizeBytes: 32 << 20, paceBytesPerSecond: 16 << 20,
                                             wallSeconds: wall, peakRSSBytes: 40 << 20, fetchedTwiceBytes: 0)
        }
    }

    @Test func aPacedLinkKeepsGainingUpToEight() throws {
        let said = try #require(ReportWriter.whereMoreStopsHelping(runs(.lesson, seconds: [2, 1, 0.5, 0.25]) + runs(.aria2c, seconds: [2, 1, 0.48, 0.25])))
        #expect(said.hasPrefix("At 4 connections lesson 11 fetched 4.0× as fast as on one, and 0.96× aria2c's speed on 4. "))
        #expect(said.hasSuffix("Each doubling up to 8 still helped: every connection is paced, and 8 paced connections are still less than this machine moves."))
    }

    @Test func theMachineStopsItWhereADoublingGainsLittle() throws {
        let said = try #require(ReportWriter.whereMoreStopsHelping(runs(.lesson, seconds: [2, 1, 0.5, 0.45])))
        #expect(said.contains("From 4 to 8 connections it gained less than a quarter"), "\(said)")
        #expect(said.contains("although the pace allowed 128 MiB/s"), "\(said)")
    }
}
