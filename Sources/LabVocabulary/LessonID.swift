/// Every lesson, declared once. The raw value is the lesson's folder name: its executable is
/// `lesson-<id>`, its exercise `exercise-<id>`, its page `Lessons/<id>.md`. (Package.swift, which
/// cannot import this module, lists the same folder names to make the targets; a test holds the
/// two lists equal.)
public enum LessonID: String, CaseIterable, Codable, Sendable, Comparable, LabName {
    case smallFile = "00-small-file"
    case inMemory = "01-in-memory"
    case fileHandle = "02-filehandle"
    case outputStream = "03-outputstream"
    case sessionDataTask = "04-session-data-task"
    case downloadTaskResume = "05-download-task-resume"
    case runLoopThread = "06-runloop-thread"
    case multipartUpload = "07-multipart-upload"
    case asyncAwait = "08-async-await"
    case backgroundSession = "09-background-session"
    case conditionalGet = "10-conditional-get"
    case segmented = "11-segmented"

    /// "03".
    public var number: String { String(rawValue.prefix(2)) }
    public var executable: String { Self.lessonPrefix + rawValue }
    public var exerciseExecutable: String { Self.exercisePrefix + rawValue }

    public static let lessonPrefix = "lesson-"
    public static let exercisePrefix = "exercise-"

    /// Everything else the lab knows of the lesson, given in full in its `LessonFacts`
    /// (LessonFacts+Lessons.swift): a new case is a compile error here until it has its facts.
    public var facts: LessonFacts {
        switch self {
        case .smallFile: .smallFile
        case .inMemory: .inMemory
        case .fileHandle: .fileHandle
        case .outputStream: .outputStream
        case .sessionDataTask: .sessionDataTask
        case .downloadTaskResume: .downloadTaskResume
        case .runLoopThread: .runLoopThread
        case .multipartUpload: .multipartUpload
        case .asyncAwait: .asyncAwait
        case .backgroundSession: .backgroundSession
        case .conditionalGet: .conditionalGet
        case .segmented: .segmented
        }
    }

    /// The case as Swift code spells it (`.outputStream`), for the `main.swift` that `lab exercise
    /// reset` writes. A test builds that file for every lesson.
    public var caseName: String { facts.caseName }
    /// The lesson's heading, as its program and its page show it.
    public var title: String { facts.title }
    /// A few words for lists: `lab exercise`'s table, the report.
    public var shortTitle: String { facts.shortTitle }
    public var kind: Kind { facts.kind }
    /// The lesson sends the file (POST /upload) instead of fetching it.
    public var uploads: Bool { kind == .upload }
    /// The ways `--way` picks from, for a lesson that shows several; nil for a lesson with one.
    public var ways: (any LessonWay.Type)? { facts.ways }
    /// The embedded server's file size (for the upload lesson: the file sent) without `--size`.
    public var defaultSize: Int64 { facts.defaultSize }
    /// The embedded server's faults without `--faults`.
    public var defaultFaults: FaultScript { facts.defaultFaults }
    /// How many times the app is launched in one run. Each launch makes a new strategy object,
    /// as a new process would, and keeps only what the earlier one left on disk.
    public var launches: Int { facts.launches }
    public var resumption: Resumption { facts.resumption }
    /// Whether the program is an app on the phone model, whose life `--life` scripts (lesson 09).
    public var runsOnThePhone: Bool { facts.runsOnThePhone }
    /// Whether the lesson splits the file over several connections at once, as many as
    /// `--connections` says (lesson 11).
    public var fetchesInSegments: Bool { facts.fetchesInSegments }
    /// Whether `lab compare` times the lesson's clean run at every size.
    public var timedAtEverySize: Bool { facts.timedAtEverySize }
    /// `Lessons/03-outputstream.md`, from the package's root.
    public var page: String { "Lessons/\(rawValue).md" }
    /// `Playgrounds/03-OutputStream.playground`, from the package's root.
    public var playground: String { "Playgrounds/\(number)-\(caseName.prefix(1).uppercased() + caseName.dropFirst()).playground" }

    /// Accepts "3", "03", "03-outputstream", "lesson-03-outputstream" or "exercise-03-outputstream".
    public init?(named name: String) {
        var name = Substring(name)
        for prefix in [Self.lessonPrefix, Self.exercisePrefix] where name.hasPrefix(prefix) { name = name.dropFirst(prefix.count) }
        let number = name.count == 1 ? "0" + name : name
        guard let lesson = Self.allCases.first(where: { $0.rawValue == number || $0.number == number }) else { return nil }
        self = lesson
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}
