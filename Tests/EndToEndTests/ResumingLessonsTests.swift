import Foundation
import LabKit
import LabVocabulary
import Testing

/// The checks every lesson that resumes with Range on its file must pass (its `resumption` says
/// so: lessons 02, 03, 04 and 08, whose corrected variants share `ResumeRules`), each run on each lesson. What is a lesson's own
/// (its article's defects, its story) stays in that lesson's test file.
@Suite(.serialized)
struct ResumingLessonsTests {
    static let lessons = LessonID.allCases.filter { $0.resumption == .rangeOnItsFile }
    /// Lesson 02's article sends a malformed Range ("bytes:N-"): Lesson02Tests shows what it does.
    /// Lesson 08's article never resumes: it downloads the whole file again.
    static let articlesThatResume: [LessonID] = [.outputStream, .sessionDataTask]

    @Test(arguments: lessons)
    func noArgumentsDropsAt40PercentAndResumes(lesson: LessonID) throws {
        try ResumableLesson(lesson.executable).checkDefaultRun()
    }

    @Test(arguments: lessons)
    func correctedResumesWithRangeAndIfRange(lesson: LessonID) throws {
        try ResumableLesson(lesson.executable).checkDropResumes(.corrected)
    }

    /// These articles send a correct Range too, only without If-Range.
    @Test(arguments: articlesThatResume)
    func articleResumesWithRange(lesson: LessonID) throws {
        try ResumableLesson(lesson.executable).checkDropResumes(.article)
    }

    @Test(arguments: lessons)
    func ignoredRangeIsCaughtOnlyByTheCorrectedVariant(lesson: LessonID) throws {
        try ResumableLesson(lesson.executable).checkIgnoredRange(articleAppends: lesson != .asyncAwait)
    }

    @Test(arguments: lessons)
    func changedEntityMakesTheCorrectedVariantStartOver(lesson: LessonID) throws {
        try ResumableLesson(lesson.executable).checkChangedEntity()
    }

    @Test(arguments: lessons, [(404, "Not Found"), (500, "Internal Server Error")])
    func httpErrorIsAOneLineTransferFailure(lesson: LessonID, error: (status: Int, reason: String)) throws {
        try ResumableLesson(lesson.executable).checkHTTPError(status: error.status, reason: error.reason)
    }

    @Test(arguments: lessons)
    func rangeThatStartsElsewhereIsNeverAppended(lesson: LessonID) throws {
        try ResumableLesson(lesson.executable).checkShiftedRange()
    }

    @Test(arguments: lessons)
    func fullDiskStopsTheCorrectedVariantAndTheRerunResumes(lesson: LessonID) throws {
        try ResumableLesson(lesson.executable).checkFullDisk()
    }

    /// Without a bound (lesson 04's bounded delegate queue, lesson 08's `BodyChunks` channel, the
    /// others' run-loop back-pressure), a 100 µs write delay took lesson 03's download to 852 MB.
    @Test(arguments: lessons)
    func aSlowDiskKeepsMemoryUnder96MB(lesson: LessonID) throws {
        try ResumableLesson(lesson.executable).checkMemory()
    }
}
