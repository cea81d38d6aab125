/// Lessons 05 to 09: resume data, a thread of its own, an upload, async/await and a background session.
import LabVocabulary

extension Catalogue {
    // MARK: - 05

    static let downloadTaskResume = LessonDefects(.downloadTaskResume, defects: [
        Defect(
            id: "resume-data-in-memory",
            summary: "the resume data is kept in memory only: after a kill the rerun starts over",
            source: sessionVersusConnection("cancelByProducingResumeData:"),
            // The first transfer stalls at 55% (45 to 65% as a seed moves it), past the Pause at
            // 40%: the Pause lands before the body ends, however slow the machine. The Resume
            // stalls 512 KiB later, and is killed there.
            trial: Trial(faults: "stall:55pct,stall:512KiB", size: 32 << 20, sequel: .killAndRerun),
            symptom: .startsOver, fix: .verifies, matrix: [],
            hints: [
                "After the kill, the next run asked for the whole file again. After a kill, what is left of the resume data?",
                "The blob must be on disk before the kill comes, and a kill gives no warning.",
                "Write the blob atomically next to the output as soon as Pause hands it over; on start, resume from it if it is there.",
            ]),
        Defect(
            id: "resume-data-only-on-pause",
            summary: "resume data is used only after a press of Pause: a dropped connection starts over",
            source: resuming("the NSURLSessionDownloadTask listing"),
            trial: Trial(faults: "drop:30pct,ok", size: 16 << 20),
            symptom: .startsOver, fix: .verifies, matrix: [],
            hints: [
                "After the drop, the next request asked for the whole file again. When the connection drops the task fails: does its error carry anything useful?",
                "A failed download task puts resume data in its error's userInfo.",
                "In didCompleteWithError, take the resume data from the error and resume from it on the next attempt.",
            ]),
        Defect(
            id: "status-ignored",
            summary: "the response is never looked at: the download task saves an error status's page, and it is kept as the file",
            source: sessionVersusConnection("didFinishDownloadingToURL:"),
            trial: Trial(faults: "status:404", size: medium),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under an error status (a 404, a 410: the ✗ line names the one played) the error page is kept as the file. A 404 is not an error to a download task: didFinishDownloadingTo gets the error page. What else does the task know?",
                "downloadTask.response is an HTTPURLResponse; read its statusCode before moving the file.",
                "Outside 200...299, set a failure (DownloadError.httpStatus(status, url: ...)) instead of moving the file, and report it in didCompleteWithError.",
            ]),
        Defect(
            id: "temp-file-name",
            summary: "the saved file is named after the temporary file, not the resource",
            source: sessionVersusConnection("didFinishDownloadingToURL:"),
            trial: Trial(faults: "", size: 4 << 20),
            symptom: .misnamesTheFile, fix: .verifies, matrix: [],
            hints: [
                "Look at the name of the file in the output folder. Whose name is it?",
                "The response knows the resource's name: suggestedFilename, or the URL's last path component.",
                "Name the file after response.suggestedFilename, keeping only its last component so it cannot leave the folder.",
            ]),
        progressPastTheTotal(source: resuming("the NSURLSessionDownloadTask listing"), total: "totalBytesExpectedToWrite",
                             faults: "gzip,gzip"),
    ], skills: [changedWhilePaused, resumeDataForAnotherURL, newInstallStartsOver])

    /// Resume data carries the first answer's ETag, and the resumed task sends it as If-Range: a
    /// file that changed during the Pause comes whole, never spliced. A resume by hand from the
    /// size on disk, without the validator, splices it.
    static let changedWhilePaused = Skill(
        id: "changed-while-paused",
        summary: "the file changed on the server during the Pause: the resumed download gets the new one whole, never spliced onto the old",
        // The first transfer stalls past the Pause (40%), so the Pause always lands before the
        // body's end, however slow the machine; the file has changed by the resume.
        trial: Trial(faults: "stall:55pct,change", size: 16 << 20, generation: 1),
        symptom: nil, fix: .verifies,
        hints: [
            "The file has the right length and the wrong bytes: the start of one version and the rest of another. It changed on the server during the Pause: how would the resume know which version you hold?",
            "Resume data holds more than an offset: the answer's validator too, which the resumed task sends back as If-Range.",
            "Resume with downloadTask(withResumeData:), from the blob cancel(byProducingResumeData:) gave; a Range of your own needs the ETag as If-Range, and a 200 starts the file again.",
        ],
        brokenBy: [])

    // MARK: - 06

    static let runLoopThread = LessonDefects(.runLoopThread, compareArguments: downloadOnly, defects: [
        Defect(
            id: "parked-workers",
            summary: "each connection keeps a GCD worker parked in RunLoop.run(): cores + 1 of them starve the global queue",
            source: progress("note 5, the GCD thread kept in its run loop"),
            trial: Trial(faults: "", size: small, arguments: ["--way", RunLoopThreadWay.crowd.rawValue]),
            symptom: .starvesTheGlobalQueue, fix: .verifies, matrix: [.crowded],
            hints: [
                "Under --way crowd the app froze: a job sent to GCD's global queue waited past its patience (exit 75). A worker in RunLoop.run() is asleep, and GCD counts it as busy: how many workers does GCD keep?",
                "A connection needs a thread that runs its run loop, not one of GCD's workers.",
                "In startInBackground, start a Thread of your own that starts the connection and runs its run loop; it exits when the connection ends.",
            ],
            linuxOnly: "libdispatch on Linux adds a worker to the global queue about once a second; Apple's GCD starts "
                + "more threads when its workers block, so the starvation is not expected there (not checked on a Mac)"),
    ], skills: [resumesAfterDrop(everyRun: downloadOnly), resumesAfterKill(everyRun: downloadOnly), changedAcrossKill(everyRun: downloadOnly)])

    /// Lesson 06's download alone: its default run fetches slices for its cases first.
    static let downloadOnly = ["--way", RunLoopThreadWay.runLoop.rawValue]

    // MARK: - 07

    static let multipartUpload = LessonDefects(.multipartUpload, defects: [
        Defect(
            id: "extra-crlf",
            summary: "two line breaks after the file's bytes: the server stores the file 2 bytes longer",
            source: scenarios("§5, the hand-built multipart body"),
            trial: Trial(faults: "", size: small),
            symptom: .uploadArrivesLonger(by: 2), fix: .verifies, matrix: [.clean],
            hints: [
                "Count the bytes the server says it stored. Where do 2 more come from?",
                "In multipart, the CRLF before a delimiter belongs to the delimiter.",
                "Write one CRLF between the file's bytes and the next --boundary, not two.",
            ]),
        Defect(
            id: "body-in-memory",
            summary: "the whole body is built in memory from the file read whole: memory grows with the file",
            source: scenarios("§5, the hand-built multipart body"),
            trial: Trial(faults: "", size: 32 << 20),
            // A streamed body keeps a few buffers (0.0× measured); one held whole is the file once.
            symptom: .holdsInMemory(moreThan: 0.5), fix: .verifies, matrix: [],
            hints: [
                "At 32 MiB the peak memory grows with the file. How many copies of the file are in memory while the body is built?",
                "URLSession can read a body from disk while it sends: a request's httpBodyStream, or uploadTask(with:fromFile:).",
                "Hand over head, file and tail in turn without joining them: an InputStream that reads one after the other, or a body file.",
            ]),
    ])

    // MARK: - 08

    static let asyncAwait = LessonDefects(.asyncAwait, defects: [
        Defect(
            id: "status-ignored",
            summary: "the response is never looked at: an error status's page is saved as the file",
            source: asyncTutorials("let (data, _) = try await data(from:)"),
            trial: Trial(faults: "status:404", size: small),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under an error status (a 404, a 410: the ✗ line names the one played) the error page is saved as the file. A 404 is not an error to URLSession: data(from:) returns normally. What else does it return?",
                "The response it returns is an HTTPURLResponse; read its statusCode before writing anything.",
                "Outside 200...299, return .failed(DownloadError.httpStatus(status, url: run.url.absoluteString)) and write nothing.",
            ]),
        startsOver,
        Defect(
            id: "body-in-memory",
            summary: "the whole body is held in memory before it is written, about twice over: memory grows with the file",
            source: asyncTutorials("data(from:), then data.write(to:)"),
            trial: Trial(faults: "", size: 32 << 20),
            symptom: .holdsInMemory(moreThan: 1.0), fix: .verifies, matrix: [],
            hints: [
                "Watch the peak memory as the file grows: 32 MiB of file, how much of memory?",
                "data(from:) returns only when the whole body is in one Data; on Linux it is copied once more on the way.",
                "Get the body with run.sharedSession.bodyChunks(for:), iterate it with `for try await chunk in chunks` and write each chunk to a FileHandle.",
            ]),
    ], skills: [resumesAfterKill(brokenBy: [startsOver]), survivesAnIgnoredRange, survivesAChangedFile, changedAcrossKill()],
       tools: partialFileTools(
        asking: ["run.sharedSession.bodyChunks(for: request)  (chunks, response) once the head is in; `for try await chunk in chunks`"],
        writing: throughAHandle))

    static let startsOver = Defect(
        id: "starts-over",
        summary: "a broken transfer keeps nothing: the next attempt downloads the whole file again",
        source: asyncTutorials("data(from:), then data.write(to:)"),
        trial: Trial(faults: "drop:40pct,ok", size: 16 << 20),
        symptom: .startsOver, fix: .verifies, matrix: [],
        hints: [
            "After the drop, the next request asked for the whole file again. When data(from:) throws, where are the bytes that had already arrived?",
            "run.sharedSession.bodyChunks(for:) returns as soon as the response head is in; its chunks can go to the file as they arrive.",
            "Let PartialFile(run) ask (nextRequest(), with Range and If-Range), judge the answer (decide(_:)) and write (append(_:through:)), as lesson 04 does.",
        ])

    /// What LabKit's `PartialFile` gives a fix that resumes (lessons 02, 03, 04 and 08), a line
    /// each for the exercise's header: how to ask, how to judge the answer, how to write.
    static func partialFileTools(asking: [String] = [], writing: [String]) -> [String] {
        ["let partial = PartialFile(run)              the file at run.file, with a sidecar that keeps its URL, ETag and total",
         "partial.nextRequest()                       the request for what is missing: Range and If-Range, Accept-Encoding: identity"]
            + asking
            + ["partial.decide(response)                    .append(at: offset), .replace (a 200: from 0), .complete, .reject(error)"]
            + writing
            + ["partial.finished()                          the file is whole: the sidecar goes",
               "DownloadError.httpStatus(status, url: run.url.absoluteString), .contentRangeMismatch(expectedStart:header:)"]
    }

    static let throughAHandle = [
        "try partial.openForWriting(at: offset)      a FileHandle from offset on, the rest cut off",
        "try partial.append(data, through: handle)   writes the bytes at the end and counts them",
    ]

    // MARK: - 09

    /// The defects of lesson 09's article variant, as background-session code keeps or breaks
    /// Apple's rules. Each trial plays the app's default life (suspended at 20%, ended at 50%)
    /// unless it says otherwise.
    static let backgroundSession = LessonDefects(.backgroundSession, defects: [
        defaultSession,
        Defect(
            id: "file-moved-later",
            summary: "the downloaded file is moved after didFinishDownloadingTo returns: by then the system has deleted it",
            source: sessionVersusConnection("didFinishDownloadingToURL:"),
            trial: Trial(faults: "", size: 4 << 20),
            symptom: .breaksBackgroundRule(.fileMovedBeforeReturn), fix: .verifies, matrix: [],
            hints: [
                "The session handed the app the file, and yet no file is where the app keeps it. What happens to `location` once the method returns?",
                "The system deletes the file at `location` as soon as urlSession(_:downloadTask:didFinishDownloadingTo:) returns.",
                "Move the file inside the method itself, with FileManager.default.moveItem(at: location, to: run.file), not in a block dispatched for later.",
            ]),
        Defect(
            id: "no-session-at-launch",
            summary: "the session is not made at launch with the same identifier: the events that waited for the app are never delivered",
            source: sessionVersusConnection("the session, made when a download starts"),
            trial: Trial(faults: "", size: 4 << 20),
            symptom: .breaksBackgroundRule(.sessionMadeAtLaunch), fix: .verifies, matrix: [],
            hints: [
                "The system relaunched the app for its session's events, and they were still waiting when the app went quiet. Which session were they for?",
                "Events go to a session with the same identifier, made in the relaunched process; nothing else receives them.",
                "Make the session in didFinishLaunching(), at every launch, with the one identifier App.sessionIdentifier.",
            ]),
        Defect(
            id: "handler-never-called",
            summary: "the completion handler of a launch for background events is never called (or not on the main queue, or before the events are in)",
            source: sessionVersusConnection("the session delegate"),
            // The events come late, as a busy phone hands them over: only the session says when they are in.
            trial: Trial(faults: "", size: 4 << 20, arguments: ["--slow-events"]),
            symptom: .breaksBackgroundRule(.completionHandlerCalled), fix: .verifies, matrix: [],
            hints: [
                "The system relaunched the app for its events, and the completion handler it gave was never called. What tells the app that every event is in?",
                "handleEventsForBackgroundURLSession hands over a handler to keep; urlSessionDidFinishEvents(forBackgroundURLSession:) says when to call it.",
                "Keep the handler in handleEventsForBackgroundURLSession; in urlSessionDidFinishEvents, call it inside DispatchQueue.main.async.",
            ]),
        Defect(
            id: "retries-force-quit",
            summary: "every failure is retried, a force-quit's cancellation too: the download starts again though the user stopped it",
            source: sessionVersusConnection("didCompleteWithError:"),
            trial: Trial(faults: "", size: 4 << 20, arguments: ["--life", "force-quit@30%,relaunch"]),
            symptom: .breaksBackgroundRule(.forceQuitNotRetried), fix: .verifies, matrix: [],
            hints: [
                "The user force-quit the app at 30% and later opened it, without tapping Start, and the download began again. Why did the task fail?",
                "A force-quit cancels the session's tasks, and the error says so: error.backgroundTaskCancelledReason == .userForceQuitApplication.",
                "In didCompleteWithError, treat that reason as the user's wish: report it and wait for Start; retry only other failures, from their resume data.",
            ]),
        Defect(
            id: "session-per-download",
            summary: "a new session is made for every download: two sessions share one identifier, which Apple calls undefined",
            source: sessionVersusConnection("a new NSURLSession for each task"),
            trial: Trial(faults: "", size: 4 << 20),
            symptom: .breaksBackgroundRule(.oneSessionPerIdentifier), fix: .verifies, matrix: [],
            hints: [
                "The app made more than one session with one identifier in one launch. Which of them would hear the events?",
                "A background session belongs to its identifier; a second one with the same identifier is undefined behaviour, and here hears nothing.",
                "Make the session once per launch, in didFinishLaunching(), keep it in a property, and make every download task from it.",
            ]),
    ], skills: [resumesAfterKill(brokenBy: [defaultSession]), startsOneDownload, startsAfterACrash, resumesWithALimit,
              resumesWhatTheSystemGaveUp])

    static let defaultSession = Defect(
        id: "default-session",
        summary: "a default session: the download runs in the app's process, dies with it, and starts over from byte 0",
        source: sessionVersusConnection("the download task, made with defaultSessionConfiguration"),
        trial: Trial(faults: "", size: 8 << 20),
        symptom: .breaksBackgroundRule(.downloadOutlivesTheApp), fix: .verifies, matrix: [],
        hints: [
            "The app was suspended at 20% and ended at 50%, and the server sent the file again from byte 0. Where did the transfer run while the app was gone?",
            "A default session's tasks live in the app's process; only a background session's run in the system's transfer service.",
            "Make the session with URLSessionConfiguration.background(withIdentifier:) and a delegate: run.makeSession(configuration:delegate:delegateQueue:).",
        ])

    /// Start tapped again while the download goes on in the service: an app that does not ask
    /// the session for its running tasks first begins the file a second time. The app crashed
    /// just after it handed the task over, so a note it meant to write after `resume()` is not
    /// there either (`crash-after-start`).
    static let startsOneDownload = Skill(
        id: "starts-one-download",
        summary: "Start, tapped while the download goes on in the background, begins no second download",
        trial: Trial(faults: "", size: 4 << 20, arguments: ["--life", "crash-after-start,start@60%"]),
        symptom: .breaksBackgroundRule(.oneDownloadAtATime), fix: .verifies,
        hints: [
            "The app crashed just after it started the download, and the system ran it on. At 60% the user opened the app and tapped Start: a second download began while the first still ran in the background. What could the app have asked first?",
            "After a relaunch the session's tasks from before may still run in the transfer service; the session lists them. What the app writes down itself, before or after resume(), a crash can leave missing or stale.",
            "In startTapped, call session.getAllTasks { tasks in … } and start a download only when tasks is empty.",
        ],
        brokenBy: [defaultSession])

    /// The app crashes as it starts the download, before the system has the task; meanwhile
    /// another app on the phone downloads the same file in the background, and at its half the
    /// user opens this app again and taps Start, once (`--max-attempts 1`). Only the session
    /// knows what runs for this app: a note the app wrote itself ("a download was started")
    /// outlives the crash, and the transfer service's records, partial files, process and
    /// connections are the other app's download. An app that trusts either starts nothing.
    /// The starting code passes, its session in the app's process: a baseline.
    static let startsAfterACrash = Skill(
        id: "starts-after-a-crash",
        summary: "Start, tapped again after the app crashed while starting the download, downloads the file, whatever other apps download meanwhile",
        trial: Trial(faults: "", size: 1 << 20, arguments: ["--life", "crash-at-start,other-app,start@50%", "--max-attempts", "1"]),
        symptom: nil, fix: .verifies,
        hints: [
            "The app crashed as it started the download, before the system had the task; then another app on the phone began downloading the same file in the background. The user opened this app again and tapped Start, and no download began. What told the app that one was running?",
            "Only the session knows which of the transfer service's tasks are this app's; what the app wrote down itself outlives a crash that the task it meant to start did not, and the service runs other apps' downloads too.",
            "In startTapped, ask session.getAllTasks { tasks in … } and start a download when tasks is empty, whatever the app noted before.",
        ],
        brokenBy: [])

    /// The other side of the limit: the system gives up on a task after its five tries, and
    /// the server then works again. The app must resume from the error's resume data, which
    /// continues where the file ends; a new task from byte 0 sends 2.5 MiB twice, and an app
    /// that never resumes has no file.
    static let resumesWhatTheSystemGaveUp = Skill(
        id: "resumes-what-the-system-gave-up",
        summary: "a failure the system gave up on is resumed from its resume data, where the file ends, not started again",
        trial: Trial(faults: "drop:512KiB*5,ok", size: 4 << 20, arguments: ["--life", "", "--max-attempts", "1"]),
        symptom: .fetchesAgain(requestsAllowed: nil), fix: .verifies,
        hints: [
            "The server cut five transfers in a row, the system's five tries, then worked again. Did the app get the file, and how many bytes came twice?",
            "When didCompleteWithError reports a failure the system gave up on, the error carries resume data: the bytes so far and where to continue.",
            "Take (error as? URLError)?.downloadTaskResumeData and, while resumes are left, session.downloadTask(withResumeData:).resume(); a new downloadTask(with:) starts from byte 0.",
        ],
        brokenBy: [defaultSession])

    /// A server that stays broken: every transfer cut at 64 KiB, 40 times over. The system tries
    /// each task five times; an app that resumes every failure it reports never stops.
    static let resumesWithALimit = Skill(
        id: "resumes-with-a-limit",
        summary: "a failure the system gave up on is resumed a few times, then reported: not retried for ever",
        trial: Trial(faults: "drop:64KiB*40", size: 4 << 20, arguments: ["--life", "", "--max-attempts", "1"]),
        symptom: .breaksBackgroundRule(.resumesWithALimit), fix: .verifiesOrStops(.transferFailed),
        hints: [
            "The server cut every transfer at 64 KiB, 40 times over, and for one tap on Start the app gave the transfer service task after task. When should it stop?",
            "The system has already tried the task five times when didCompleteWithError reports the failure; its resume data is worth a few more tries, not an endless loop: a server that is down stays down.",
            "Count the resumes in a property (two in the corrected variant), resume from the error's resume data only while some are left, then report the failure.",
        ],
        brokenBy: [defaultSession])
}
