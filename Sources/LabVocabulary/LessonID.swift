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

    /// Everything else the lab knows of the lesson, each field given here: a `LessonFacts` that
    /// leaves one out does not compile, and a new case without its facts does not either.
    public var facts: LessonFacts {
        switch self {
        case .smallFile:
            LessonFacts(caseName: "smallFile", title: "A small file in one call", shortTitle: "Small file, completion handler",
                        kind: .download, ways: SmallFileWay.self, defaultSize: 4 << 20,
                        // One call has nothing to resume.
                        defaultFaults: .none, launches: 1, resumption: .startsOver, runsOnThePhone: false,
                        fetchesInSegments: false, timedAtEverySize: true)
        case .inMemory:
            LessonFacts(caseName: "inMemory", title: "Every chunk in one buffer in memory", shortTitle: "In-memory buffer (NSMutableData)",
                        kind: .download, ways: nil, defaultSize: 64 << 20, defaultFaults: .dropsOnceAt40Percent, launches: 1,
                        resumption: .startsOver, runsOnThePhone: false, fetchesInSegments: false, timedAtEverySize: true)
        case .fileHandle:
            LessonFacts(caseName: "fileHandle", title: "FileHandle seek-to-end and write, resumed with Range",
                        shortTitle: "FileHandle seek and append", kind: .download, ways: nil, defaultSize: 64 << 20,
                        defaultFaults: .dropsOnceAt40Percent, launches: 1, resumption: .rangeOnItsFile, runsOnThePhone: false,
                        fetchesInSegments: false, timedAtEverySize: true)
        case .outputStream:
            LessonFacts(caseName: "outputStream", title: "OutputStream append, resumed with Range", shortTitle: "OutputStream append",
                        kind: .download, ways: nil, defaultSize: 64 << 20, defaultFaults: .dropsOnceAt40Percent, launches: 1,
                        resumption: .rangeOnItsFile, runsOnThePhone: false, fetchesInSegments: false, timedAtEverySize: true)
        case .sessionDataTask:
            LessonFacts(caseName: "sessionDataTask", title: "URLSession data task with a data delegate, resumed with Range",
                        shortTitle: "URLSession data task", kind: .download, ways: nil, defaultSize: 64 << 20,
                        defaultFaults: .dropsOnceAt40Percent, launches: 1, resumption: .rangeOnItsFile, runsOnThePhone: false,
                        fetchesInSegments: false, timedAtEverySize: true)
        case .downloadTaskResume:
            LessonFacts(caseName: "downloadTaskResume", title: "Download task with resume data", shortTitle: "Download task with resume data",
                        kind: .downloadIntoFolder, ways: nil, defaultSize: 64 << 20,
                        // The lesson presses Pause itself, at 40%.
                        defaultFaults: .none, launches: 1, resumption: .itsOwnWay, runsOnThePhone: false,
                        fetchesInSegments: false, timedAtEverySize: true)
        case .runLoopThread:
            LessonFacts(caseName: "runLoopThread", title: "A connection on a background thread, and its run loop",
                        shortTitle: "Connection on a run-loop thread", kind: .download, ways: RunLoopThreadWay.self,
                        defaultSize: 64 << 20, defaultFaults: .dropsOnceAt40Percent, launches: 1, resumption: .itsOwnWay,
                        runsOnThePhone: false, fetchesInSegments: false, timedAtEverySize: true)
        case .multipartUpload:
            LessonFacts(caseName: "multipartUpload", title: "multipart/form-data upload built by hand, with upload progress",
                        shortTitle: "Multipart upload", kind: .upload, ways: MultipartUploadWay.self, defaultSize: 16 << 20,
                        // The default run is a clean one.
                        defaultFaults: .none, launches: 1, resumption: .startsOver, runsOnThePhone: false,
                        fetchesInSegments: false, timedAtEverySize: true)
        case .asyncAwait:
            LessonFacts(caseName: "asyncAwait", title: "async/await: data(from:), and bytes(for:) streamed to a file and resumed",
                        shortTitle: "async/await: data(from:) or bytes(for:)", kind: .download, ways: AsyncAwaitWay.self,
                        defaultSize: 64 << 20, defaultFaults: .dropsOnceAt40Percent, launches: 1, resumption: .rangeOnItsFile,
                        runsOnThePhone: false, fetchesInSegments: false, timedAtEverySize: true)
        case .backgroundSession:
            LessonFacts(caseName: "backgroundSession", title: "A background session: the app goes away, the download goes on",
                        shortTitle: "Background session", kind: .download, ways: nil, defaultSize: 64 << 20,
                        // The story is the app's life (`--life`), not the server's faults.
                        defaultFaults: .none, launches: 1, resumption: .itsOwnWay, runsOnThePhone: true, fetchesInSegments: false,
                        // Its run's time is the model's waits more than the transfer: the smallest
                        // and the largest size tell its memory and its speed.
                        timedAtEverySize: false)
        case .conditionalGet:
            LessonFacts(caseName: "conditionalGet",
                        title: "Don't download it twice: a conditional GET on the next launch, and where the file lives",
                        shortTitle: "Next launch: conditional GET", kind: .downloadIntoContainer, ways: nil, defaultSize: 64 << 20,
                        // The first launch downloads the file; before the second, it changes on the
                        // server (same size, new ETag and Last-Modified). A HEAD previews the change
                        // without using it up.
                        defaultFaults: FaultScript(attempts: [[], [.change]]),
                        // The second launch must decide whether the file it kept is still the server's.
                        launches: 2, resumption: .startsOver, runsOnThePhone: false, fetchesInSegments: false,
                        timedAtEverySize: true)
        case .segmented:
            LessonFacts(caseName: "segmented", title: "Many connections at once: a file in segments, each resumed on its own",
                        shortTitle: "Segmented, several connections", kind: .download, ways: nil, defaultSize: 64 << 20,
                        // A CDN that paces each connection (so more connections go faster), and the
                        // first segment's GET breaks at 40%: it resumes while the others go on.
                        defaultFaults: FaultScript(attempts: [[.throttle(bytesPerSecond: 16 << 20), .drop(after: .percent(40))]]
                                                   + Array(repeating: [.throttle(bytesPerSecond: 16 << 20)], count: 99)),
                        launches: 1, resumption: .itsOwnWay, runsOnThePhone: false, fetchesInSegments: true, timedAtEverySize: true)
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
