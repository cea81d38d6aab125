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

    /// "03".
    public var number: String { String(rawValue.prefix(2)) }
    public var executable: String { Self.lessonPrefix + rawValue }
    public var exerciseExecutable: String { Self.exercisePrefix + rawValue }

    public static let lessonPrefix = "lesson-"
    public static let exercisePrefix = "exercise-"

    /// The case as Swift code spells it (`.outputStream`), for the `main.swift` that `lab exercise
    /// reset` writes. A test builds that file for every lesson.
    public var caseName: String {
        switch self {
        case .smallFile: "smallFile"
        case .inMemory: "inMemory"
        case .fileHandle: "fileHandle"
        case .outputStream: "outputStream"
        case .sessionDataTask: "sessionDataTask"
        case .downloadTaskResume: "downloadTaskResume"
        case .runLoopThread: "runLoopThread"
        case .multipartUpload: "multipartUpload"
        case .asyncAwait: "asyncAwait"
        case .backgroundSession: "backgroundSession"
        case .conditionalGet: "conditionalGet"
        case .segmented: "segmented"
        }
    }

    /// The lesson's heading, as its program and its page show it.
    public var title: String {
        switch self {
        case .smallFile: "A small file in one call"
        case .inMemory: "Every chunk in one buffer in memory"
        case .fileHandle: "FileHandle seek-to-end and write, resumed with Range"
        case .outputStream: "OutputStream append, resumed with Range"
        case .sessionDataTask: "URLSession data task with a data delegate, resumed with Range"
        case .downloadTaskResume: "Download task with resume data"
        case .runLoopThread: "A connection on a background thread, and its run loop"
        case .multipartUpload: "multipart/form-data upload built by hand, with upload progress"
        case .asyncAwait: "async/await: data(from:), and bytes(for:) streamed to a file and resumed"
        case .backgroundSession: "A background session: the app goes away, the download goes on"
        case .conditionalGet: "Don't download it twice: a conditional GET on the next launch, and where the file lives"
        case .segmented: "Many connections at once: a file in segments, each resumed on its own"
        }
    }

    /// A few words for lists: `lab exercise`'s table, the report.
    public var shortTitle: String {
        switch self {
        case .smallFile: "Small file, completion handler"
        case .inMemory: "In-memory buffer (NSMutableData)"
        case .fileHandle: "FileHandle seek and append"
        case .outputStream: "OutputStream append"
        case .sessionDataTask: "URLSession data task"
        case .downloadTaskResume: "Download task with resume data"
        case .runLoopThread: "Connection on a run-loop thread"
        case .multipartUpload: "Multipart upload"
        case .asyncAwait: "async/await: data(from:) or bytes(for:)"
        case .backgroundSession: "Background session"
        case .conditionalGet: "Next launch: conditional GET"
        case .segmented: "Segmented, several connections"
        }
    }

    /// The lesson sends the file (POST /upload) instead of fetching it.
    public var uploads: Bool { kind == .upload }

    public var kind: Kind {
        switch self {
        case .downloadTaskResume: .downloadIntoFolder
        case .conditionalGet: .downloadIntoContainer
        case .multipartUpload: .upload
        default: .download
        }
    }

    /// The ways `--way` picks from, for a lesson that shows several; nil for a lesson with one.
    public var ways: (any LessonWay.Type)? {
        switch self {
        case .smallFile: SmallFileWay.self
        case .runLoopThread: RunLoopThreadWay.self
        case .multipartUpload: MultipartUploadWay.self
        case .asyncAwait: AsyncAwaitWay.self
        default: nil
        }
    }

    /// The embedded server's file size (for the upload lesson: the file sent) without `--size`.
    public var defaultSize: Int64 {
        switch self {
        case .smallFile: 4 << 20
        case .multipartUpload: 16 << 20
        default: 64 << 20
        }
    }

    /// The embedded server's faults without `--faults`.
    public var defaultFaults: FaultScript {
        switch self {
        // One call has nothing to resume; lesson 05 presses Pause itself, at 40%; the upload
        // lesson's default run is a clean one; lesson 09's story is the app's life (`--life`).
        case .smallFile, .downloadTaskResume, .multipartUpload, .backgroundSession: .none
        // A CDN that paces each connection (so more connections go faster), and the first
        // segment's GET breaks at 40%: it resumes while the others go on.
        case .segmented: FaultScript(attempts: [[.throttle(bytesPerSecond: 16 << 20), .drop(after: .percent(40))]]
                                     + Array(repeating: [.throttle(bytesPerSecond: 16 << 20)], count: 99))
        // The first launch downloads the file; before the second, it changes on the server
        // (same size, new ETag and Last-Modified). A HEAD previews the change without using it up.
        case .conditionalGet: FaultScript(attempts: [[], [.change]])
        // The first attempt breaks at 40%, the second one behaves (lesson 01 starts over).
        default: FaultScript(attempts: [[.drop(after: .percent(40))], []])
        }
    }

    /// How many times the app is launched in one run: lesson 10's second launch must decide
    /// whether the file it kept is still the server's. Each launch makes a new strategy object,
    /// as a new process would, and keeps only what the first left on disk.
    public var launches: Int {
        switch self {
        case .conditionalGet: 2
        default: 1
        }
    }

    /// Whether the lesson splits the file over several connections at once, as many as
    /// `--connections` says (lesson 11).
    public var fetchesInSegments: Bool { self == .segmented }

    /// Whether `lab compare` times the lesson's clean run at every size. Lesson 09's run is an
    /// app's life, whose time is the model's waits more than the transfer: the smallest and the
    /// largest size tell its memory and its speed.
    public var timedAtEverySize: Bool { self != .backgroundSession }

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
