/// What the lab knows of one lesson besides its folder name, given in full in `LessonID.facts`.
/// No field has a default: a declaration that leaves one out is a compile error naming it.
public struct LessonFacts: Sendable {
    /// The case as Swift spells it (`outputStream`), for the exercise's `main.swift`.
    public let caseName: String
    public let title: String
    public let shortTitle: String
    public let kind: LessonID.Kind
    /// The ways `--way` picks from, or nil for a lesson with one.
    public let ways: (any LessonWay.Type)?
    /// The embedded server's file size without `--size` (for the upload lesson, the file sent).
    public let defaultSize: Int64
    /// The embedded server's faults without `--faults`.
    public let defaultFaults: FaultScript
    public let launches: Int
    public let resumption: LessonID.Resumption
    public let runsOnThePhone: Bool
    public let fetchesInSegments: Bool
    public let timedAtEverySize: Bool
}

extension LessonID {
    /// What the lesson's program does with the file.
    public enum Kind: Sendable {
        /// Downloads into the file the lab names (`--output`).
        case download
        /// Downloads into a folder (the app's Documents) under a name it chooses itself.
        case downloadIntoFolder
        /// Downloads into an app's data container (Documents, Library/Caches, …), into the
        /// folder it picks, under a name it chooses itself.
        case downloadIntoContainer
        /// Sends a file the lab generates to the server.
        case upload
    }

    /// What the lesson's corrected variant does with a transfer that broke.
    public enum Resumption: Sendable {
        /// It keeps nothing of it: the next attempt starts over (00 and 01 hold the body in
        /// memory; 07 sends; 10 teaches the next launch, not the broken transfer).
        case startsOver
        /// It continues its one file with `Range` and `If-Range` from the size on disk, by the
        /// shared resume rules (02, 03, 04, 08): `ResumingLessonsTests` runs every such lesson.
        case rangeOnItsFile
        /// It continues on disk in a way of its own: resume data (05, 09), a connection on its
        /// own thread (06, which resumes as 03 does), each segment on its own (11).
        case itsOwnWay
    }
}

extension FaultScript {
    /// The first attempt breaks at 40%, the second one behaves: a default that shows a resume
    /// (or, for a lesson that starts over, the whole file again).
    static let dropsOnceAt40Percent = FaultScript(attempts: [[.drop(after: .percent(40))], []])
}
