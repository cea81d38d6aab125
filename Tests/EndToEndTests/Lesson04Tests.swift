import Foundation
import LabKit
import LabServer
import Testing

/// lesson-04-session-data-task, run as a child process against the real embedded server. The
/// checks are shared with lesson 02 (`ResumableLesson`).
@Suite(.serialized)
final class Lesson04Tests {
    let lesson: ResumableLesson

    init() throws {
        lesson = try ResumableLesson("lesson-04-session-data-task")
    }

    @Test func noArgumentsDropsAt40PercentAndResumes() throws {
        try lesson.checkDefaultRun()
    }

    /// The article sends a correct Range too, only without If-Range.
    @Test(arguments: Variant.allCases)
    func dropAt40PercentResumesWithRange(variant: Variant) throws {
        try lesson.checkDropResumes(variant)
    }

    @Test func ignoredRangeIsCaughtOnlyByTheCorrectedVariant() throws {
        try lesson.checkIgnoredRange()
    }

    @Test func changedEntityMakesTheCorrectedVariantStartOver() throws {
        try lesson.checkChangedEntity()
    }

    @Test(arguments: [(404, "Not Found"), (500, "Internal Server Error")])
    func httpErrorIsAOneLineTransferFailure(status: Int, reason: String) throws {
        try lesson.checkHTTPError(status: status, reason: reason)
    }

    @Test func rangeThatStartsElsewhereIsNeverAppended() throws {
        try lesson.checkShiftedRange()
    }

    @Test func fullDiskStopsTheCorrectedVariantAndTheRerunResumes() throws {
        try lesson.checkFullDisk()
    }

    /// Without the bounded delegate queue, the session would queue every chunk for the slow delegate.
    @Test func oneGibibyteWithASlowDiskStaysUnder96MB() throws {
        try lesson.checkMemory()
    }
}
