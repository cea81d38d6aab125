/// Each lesson's facts, one value each, every field given: `LessonID.facts` picks the one for
/// a case. A fact left out is a compile error ("missing argument for parameter …").
extension LessonFacts {
    static let smallFile = LessonFacts(
        caseName: "smallFile", title: "A small file in one call", shortTitle: "Small file, completion handler",
        kind: .download, ways: SmallFileWay.self, defaultSize: 4 << 20,
        // One call has nothing to resume.
        defaultFaults: .none, launches: 1, resumption: .startsOver, runsOnThePhone: false,
        fetchesInSegments: false, timedAtEverySize: true)

    static let inMemory = LessonFacts(
        caseName: "inMemory", title: "Every chunk in one buffer in memory", shortTitle: "In-memory buffer (NSMutableData)",
        kind: .download, ways: nil, defaultSize: 64 << 20, defaultFaults: .dropsOnceAt40Percent, launches: 1,
        resumption: .startsOver, runsOnThePhone: false, fetchesInSegments: false, timedAtEverySize: true)

    static let fileHandle = LessonFacts(
        caseName: "fileHandle", title: "FileHandle seek-to-end and write, resumed with Range",
        shortTitle: "FileHandle seek and append", kind: .download, ways: nil, defaultSize: 64 << 20,
        defaultFaults: .dropsOnceAt40Percent, launches: 1, resumption: .rangeOnItsFile, runsOnThePhone: false,
        fetchesInSegments: false, timedAtEverySize: true)

    static let outputStream = LessonFacts(
        caseName: "outputStream", title: "OutputStream append, resumed with Range", shortTitle: "OutputStream append",
        kind: .download, ways: nil, defaultSize: 64 << 20, defaultFaults: .dropsOnceAt40Percent, launches: 1,
        resumption: .rangeOnItsFile, runsOnThePhone: false, fetchesInSegments: false, timedAtEverySize: true)

    static let sessionDataTask = LessonFacts(
        caseName: "sessionDataTask", title: "URLSession data task with a data delegate, resumed with Range",
        shortTitle: "URLSession data task", kind: .download, ways: nil, defaultSize: 64 << 20,
        defaultFaults: .dropsOnceAt40Percent, launches: 1, resumption: .rangeOnItsFile, runsOnThePhone: false,
        fetchesInSegments: false, timedAtEverySize: true)

    static let downloadTaskResume = LessonFacts(
        caseName: "downloadTaskResume", title: "Download task with resume data", shortTitle: "Download task with resume data",
        kind: .downloadIntoFolder, ways: nil, defaultSize: 64 << 20,
        // The lesson presses Pause itself, at 40%.
        defaultFaults: .none, launches: 1, resumption: .itsOwnWay, runsOnThePhone: false,
        fetchesInSegments: false, timedAtEverySize: true)

    static let runLoopThread = LessonFacts(
        caseName: "runLoopThread", title: "A connection on a background thread, and its run loop",
        shortTitle: "Connection on a run-loop thread", kind: .download, ways: RunLoopThreadWay.self,
        defaultSize: 64 << 20, defaultFaults: .dropsOnceAt40Percent, launches: 1, resumption: .itsOwnWay,
        runsOnThePhone: false, fetchesInSegments: false, timedAtEverySize: true)

    static let multipartUpload = LessonFacts(
        caseName: "multipartUpload", title: "multipart/form-data upload built by hand, with upload progress",
        shortTitle: "Multipart upload", kind: .upload, ways: MultipartUploadWay.self, defaultSize: 16 << 20,
        // The default run is a clean one.
        defaultFaults: .none, launches: 1, resumption: .startsOver, runsOnThePhone: false,
        fetchesInSegments: false, timedAtEverySize: true)

    static let asyncAwait = LessonFacts(
        caseName: "asyncAwait", title: "async/await: data(from:), and bytes(for:) streamed to a file and resumed",
        shortTitle: "async/await: data(from:) or bytes(for:)", kind: .download, ways: AsyncAwaitWay.self,
        defaultSize: 64 << 20, defaultFaults: .dropsOnceAt40Percent, launches: 1, resumption: .rangeOnItsFile,
        runsOnThePhone: false, fetchesInSegments: false, timedAtEverySize: true)

    static let backgroundSession = LessonFacts(
        caseName: "backgroundSession", title: "A background session: the app goes away, the download goes on",
        shortTitle: "Background session", kind: .download, ways: nil, defaultSize: 64 << 20,
        // The story is the app's life (`--life`), not the server's faults.
        defaultFaults: .none, launches: 1, resumption: .itsOwnWay, runsOnThePhone: true, fetchesInSegments: false,
        // Its run's time is the model's waits more than the transfer: the smallest
        // and the largest size tell its memory and its speed.
        timedAtEverySize: false)

    static let conditionalGet = LessonFacts(
        caseName: "conditionalGet",
        title: "Don't download it twice: a conditional GET on the next launch, and where the file lives",
        shortTitle: "Next launch: conditional GET", kind: .downloadIntoContainer, ways: nil, defaultSize: 64 << 20,
        // The first launch downloads the file; before the second, it changes on the
        // server (same size, new ETag and Last-Modified). A HEAD previews the change
        // without using it up.
        defaultFaults: FaultScript(attempts: [[], [.change]]),
        // The second launch must decide whether the file it kept is still the server's.
        launches: 2, resumption: .startsOver, runsOnThePhone: false, fetchesInSegments: false,
        timedAtEverySize: true)

    static let segmented = LessonFacts(
        caseName: "segmented", title: "Many connections at once: a file in segments, each resumed on its own",
        shortTitle: "Segmented, several connections", kind: .download, ways: nil, defaultSize: 64 << 20,
        // A CDN that paces each connection (so more connections go faster), and the
        // first segment's GET breaks at 40%: it resumes while the others go on.
        defaultFaults: FaultScript(attempts: [[.throttle(bytesPerSecond: 16 << 20), .drop(after: .percent(40))]]
                                   + Array(repeating: [.throttle(bytesPerSecond: 16 << 20)], count: 99)),
        launches: 1, resumption: .itsOwnWay, runsOnThePhone: false, fetchesInSegments: true, timedAtEverySize: true)
}
