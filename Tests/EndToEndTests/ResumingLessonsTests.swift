import Foundation
import LabKit
import LabVocabulary
import Testing

/// The checks every lesson that resumes with Range must pass (lessons 02, 03, 04 and 08, whose
/// corrected variants share `PartialFile`), each run on each lesson. What is a lesson's own
/// (its article's defects, its story) stays in that lesson's test file.
@Suite(.serialized)
struct ResumingLessonsTests {
    static let lessons = ["lesson-02-filehandle", "lesson-03-outputstream", "lesson-04-session-data-task", "lesson-08-async-await"]
    /// Lesson 02's article sends a malformed Range ("bytes:N-"): Lesson02Tests shows what it does.
    /// Lesson 08's article never resumes: it downloads the whole file again.
    static let articlesThatResume = ["lesson-03-outputstream", "lesson-04-session-data-task"]

    @Test(arguments: lessons)
    func noArgumentsDropsAt40PercentAndResumes(lesson: String) throws {
        try ResumableLesson(lesson).checkDefaultRun()
    }

    @Test(arguments: lessons)
    func correctedResumesWithRangeAndIfRange(lesson: String) throws {
        try ResumableLesson(lesson).checkDropResumes(.corrected)
    }

    /// These articles send a correct Range too, only without If-Range.
    @Test(arguments: articlesThatResume)
    func articleResumesWithRange(lesson: String) throws {
        try ResumableLesson(lesson).checkDropResumes(.article)
    }

    @Test(arguments: lessons)
    func ignoredRangeIsCaughtOnlyByTheCorrectedVariant(lesson: String) throws {
        try ResumableLesson(lesson).checkIgnoredRange(articleAppends: lesson != LessonID.asyncAwait.executable)
    }

    @Test(arguments: lessons)
    func changedEntityMakesTheCorrectedVariantStartOver(lesson: String) throws {
        try ResumableLesson(lesson).checkChangedEntity()
    }

    @Test(arguments: lessons, [(404, "Not Found"), (500, "Internal Server Error")])
    func httpErrorIsAOneLineTransferFailure(lesson: String, error: (status: Int, reason: String)) throws {
        try ResumableLesson(lesson).checkHTTPError(status: error.status, reason: error.reason)
    }

    @Test(arguments: lessons)
    func rangeThatStartsElsewhereIsNeverAppended(lesson: String) throws {
        try ResumableLesson(lesson).checkShiftedRange()
    }

    @Test(arguments: lessons)
    func fullDiskStopsTheCorrectedVariantAndTheRerunResumes(lesson: String) throws {
        try ResumableLesson(lesson).checkFullDisk()
    }

    /// Without a bound (lesson 04's bounded delegate queue, lesson 08's `BodyChunks` channel, the
    /// others' run-loop back-pressure), a 100 µs write delay took lesson 03's download to 852 MB.
    @Test(arguments: lessons)
    func aSlowDiskKeepsMemoryUnder96MB(lesson: String) throws {
        try ResumableLesson(lesson).checkMemory()
    }
}
