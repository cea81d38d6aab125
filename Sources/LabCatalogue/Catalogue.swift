/// A lesson as the tools see it, and its defects: what its `article` variant gets wrong, one
/// entry per defect. Its exercise is the article's code with all of them in it, and has one
/// check per defect. `lab compare`, `lab exercise` and the tests all read the lessons from here.
import LabPlatform
import LabVocabulary
public struct LessonDefects: Sendable {
    public let id: LessonID
    /// The id's raw value: the lesson is `lesson-<id>`, the exercise `exercise-<id>`.
    public var lesson: String { id.rawValue }
    /// The lesson's name in tables: the report, `results.json`.
    public var title: String { id.shortTitle }
    /// The lesson sends the file (POST /upload) instead of fetching it.
    public var uploads: Bool { id.kind == .upload }
    /// Arguments that pick the download itself out of a lesson whose default run also tells side
    /// stories, for `lab compare` (lesson 06's demonstrations take seconds and would swamp its
    /// numbers).
    public var compareArguments: [String] = []
    /// The corrected variant refuses a file bigger than this, on purpose (lesson 00's limit for
    /// a body held in memory).
    public var correctedRefusesAbove: Int64?
    /// Every defect, those that show only on Linux too: what the lesson page lists.
    public let everyDefect: [Defect]
    /// The defects a run on this system shows, which the checks and `lab compare` expect.
    public var defects: [Defect] { Platform.isLinux ? everyDefect : everyDefect.filter { $0.linuxOnly == nil } }
    /// What the lesson teaches, checked beside the defects.
    public let skills: [Skill]

    public var number: String { id.number }
    public var lessonExecutable: String { id.executable }
    public var exerciseExecutable: String { id.exerciseExecutable }

    /// What LabKit gives the fix, a line each, for the exercise's header: the calls the article's
    /// code does not show, with their decisions and errors.
    public let tools: [String]

    init(_ id: LessonID, compareArguments: [String] = [], correctedRefusesAbove: Int64? = nil, defects: [Defect],
         skills: [Skill] = [], tools: [String] = []) {
        self.id = id
        self.compareArguments = compareArguments
        self.correctedRefusesAbove = correctedRefusesAbove
        everyDefect = defects
        self.skills = skills
        self.tools = tools
    }

    /// The fault-matrix columns where the catalogue expects the article variant to fail.
    public var failingScenarios: Set<Scenario> { Set(defects.flatMap(\.matrix)) }

    /// Whether an article run that failed in `scenario`, as `observation` shows, failed the way
    /// one of the defects says it does there.
    public func predicts(_ observation: Observation, in scenario: Scenario) -> Bool {
        defects.contains { $0.matrix.contains(scenario) && $0.symptom.isShown(in: observation) }
    }
}

/// Every lesson's defects. Each symptom is the one the article variant shows in the trial; the
/// end-to-end tests run every trial on both variants and hold them to it.
public enum Catalogue {
    public static let lessons: [LessonDefects] = [
        smallFile, inMemory, fileHandle, outputStream, sessionDataTask, downloadTaskResume, runLoopThread, multipartUpload,
        asyncAwait, backgroundSession,
    ]

    /// Accepts any of the names `LessonID(named:)` reads.
    public static func lesson(named name: String) -> LessonDefects? {
        LessonID(named: name).flatMap(lesson)
    }

    public static func lesson(_ id: LessonID) -> LessonDefects? { lessons.first { $0.id == id } }

    static func scenarios(_ section: String) -> ArticleSection { ArticleSection(title: "网络篇 - 03.NSURLConnection应用场景", section: section) }
    static func progress(_ section: String) -> ArticleSection { ArticleSection(title: "NSURLConnection下载文件并监测下载进度", section: section) }
    static func sessionVersusConnection(_ section: String) -> ArticleSection { ArticleSection(title: "NSURLSession VS NSURLConnection", section: section) }
    static func resuming(_ section: String) -> ArticleSection { ArticleSection(title: "iOS 断点续传", section: section) }
    static func urlGuide(_ section: String) -> ArticleSection { ArticleSection(title: "IOS如何根据URL下载内容", section: section) }
    /// Lesson 08 has no source article: its article variant is the one-liner tutorials show.
    static func asyncTutorials(_ section: String) -> ArticleSection { ArticleSection(title: "URLSession async/await, as tutorials write it", section: section) }

    static let small: Int64 = 1 << 20
    static let medium: Int64 = 4 << 20

    // MARK: - 00

    static let smallFile = LessonDefects(.smallFile, correctedRefusesAbove: 64 << 20, defects: [
        Defect(
            id: "status-ignored",
            summary: "the status code is never read: a 404's error page is saved as the file",
            source: scenarios("§1, the completion handler"),
            trial: Trial(faults: "status:404", size: small),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under a 404 the program calls the server's error page the file. The completion handler gets a response as well as the data: what does a 404 look like there?",
                "Cast the response to HTTPURLResponse and look at statusCode before writing anything.",
                "Outside 200...299, return .failed(DownloadError.httpStatus(status, url: ...)) and write nothing.",
            ]),
        Defect(
            id: "error-ignored",
            summary: "the error is never read: a broken transfer saves nothing and still counts as done",
            source: scenarios("§1, the completion handler"),
            trial: Trial(faults: "drop:40pct,ok", size: small),
            symptom: .claimsDone(.missing), fix: .verifies, matrix: [.dropResume, .ignoreRange, .entityChanged],
            hints: [
                "When the connection drops, nothing is saved and the program still says it is done. What does the handler's third argument hold then?",
                "When the error is not nil there is no file to save: this attempt failed.",
                "Return .failed(error) when the call gives an error; LabKit then runs the next attempt.",
            ]),
        Defect(
            id: "length-unchecked",
            summary: "the body's length is never compared with Content-Length: a short body is saved as the file",
            source: scenarios("§1, the completion handler"),
            trial: Trial(faults: "bad-length:-100", size: small),
            symptom: .claimsDone(.shorter(by: .bytes(100))), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "The file is 100 bytes short, and the program calls it done. The server announced a length: did the body have it?",
                "response.expectedContentLength is the announced length; data.count is what came.",
                "When they differ, return .failed(DownloadError.lengthMismatch(expected:received:)) and save nothing.",
            ]),
        Defect(
            id: "no-memory-limit",
            summary: "any size goes into memory: a big file is held whole, about twice",
            source: urlGuide("synchronous requests and their limits"),
            trial: Trial(faults: "", size: 96 << 20),
            symptom: .holdsInMemory(moreThan: 1.0), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "At 96 MiB the peak memory grows with the file. One call hands the whole body over at once: how big may it be before that is a problem?",
                "A HEAD request tells the size before any body arrives.",
                "Above a limit (64 MiB in the corrected variant), return .failed(DownloadError.tooLargeForMemory(bytes:limit:)) without sending the GET.",
            ]),
    ])

    // MARK: - 01

    static let inMemory = LessonDefects(.inMemory, defects: [
        Defect(
            id: "status-ignored",
            summary: "the status code is never read: a 404's error page becomes the file",
            source: urlGuide("the NSURLConnection delegate with NSMutableData"),
            trial: Trial(faults: "status:404", size: small),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under a 404 the error page becomes the file. didReceive response: is the first callback: what could it tell you about a 404?",
                "Cast the response to HTTPURLResponse and keep its statusCode.",
                "Outside 200...299, cancel the connection and set outcome = .failed(DownloadError.httpStatus(status, url: ...)).",
            ]),
        Defect(
            id: "copy-at-hand-over",
            summary: "the buffer is copied when it is handed over: for a moment the body is in memory twice",
            source: urlGuide("the NSURLConnection delegate with NSMutableData"),
            trial: Trial(faults: "", size: 32 << 20),
            symptom: .holdsInMemory(moreThan: 1.6), fix: .verifies, matrix: [],
            hints: [
                "The peak memory is about twice the file. Look at the peak, not the buffer: where could a second copy of the body come from?",
                "Converting an NSMutableData to Data copies it all. Which line does that?",
                "Collect the body in a Data from the start, and write that Data as it is.",
            ]),
        progressPastTheTotal(source: urlGuide("the NSURLConnection delegate with NSMutableData"), total: "expectedLength"),
    ])

    // MARK: - 02

    static let fileHandle = LessonDefects(.fileHandle, defects: [
        Defect(
            id: "range-colon",
            summary: "the Range header is written bytes:N- with a colon, so servers ignore it and send the whole file",
            source: scenarios("§3, NSFileHandle"),
            trial: Trial(faults: "drop:40pct,ok", size: medium),
            symptom: .claimsDone(.longer(by: .bytesBeforeTheBreak)), fix: .verifies,
            matrix: [.dropResume, .killRerun, .ignoreRange, .entityChanged],
            hints: [
                "After the drop the file ends up longer by the bytes before the break: the whole file came again and was appended. Read the Range header the second attempt sends, character by character.",
                "RFC 9110 writes a byte range as bytes=N-. Compare it with what the code sends.",
                "Change \"bytes:\\(localSize)-\" to \"bytes=\\(localSize)-\".",
            ]),
        Defect(
            id: "no-206-check",
            summary: "nothing checks for 206: a 200 with the whole file is appended after the partial one",
            source: resuming("the NSURLConnection listing"),
            trial: Trial(faults: "drop:40pct,ignore-range", size: medium),
            symptom: .claimsDone(.longer(by: .bytesBeforeTheBreak)), fix: .verifies, matrix: [.ignoreRange],
            hints: [
                "The file ends up longer by the bytes before the break: a server that ignored Range sent the whole file, and it was appended. How would the response tell you?",
                "206 means \"the part you asked for\"; 200 means \"the whole file from byte 0\".",
                "On 200, start writing at offset 0: truncate the file (fileHandle.truncate(atOffset: 0)) before the first chunk.",
            ]),
        Defect(
            id: "no-content-range-check",
            summary: "nothing checks Content-Range: a 206 that starts elsewhere is appended anyway",
            source: resuming("the NSURLConnection listing"),
            trial: Trial(faults: "drop:40pct,shift-range:-100", size: medium),
            symptom: .claimsDone(.longer(by: .bytesBeforeTheBreak)), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "The file ends up too long: a 206 that started before the end of the file was appended anyway. A 206 says where its bytes start: is that where your file ends?",
                "Read the Content-Range header: bytes <first>-<last>/<total>.",
                "When <first> is not the size on disk, append nothing: cancel the connection and set outcome = .failed(DownloadError.contentRangeMismatch(expectedStart:header:)).",
            ]),
        Defect(
            id: "no-validator",
            summary: "no validator is sent: a file that changed on the server is spliced onto the old one",
            source: resuming("the NSURLConnection listing"),
            trial: Trial(faults: "drop:40pct,change", size: medium, generation: 1),
            symptom: .claimsDone(.longer(by: .bytesBeforeTheBreak)), fix: .verifies, matrix: [],
            hints: [
                "The file has the right length and the wrong bytes: the start of one version and the rest of another. Between two attempts the file on the server changed: how would the server know which version you hold?",
                "Keep the first response's ETag (or Last-Modified), and send it back as If-Range with the Range.",
                "If-Range makes the server answer 200 with the new file when the ETag no longer matches; handle that 200 by starting over.",
            ]),
        Defect(
            id: "write-errors-dropped",
            summary: "write errors are dropped: a full disk ends in \"download finished\" with a short file",
            source: scenarios("§3, NSFileHandle"),
            trial: Trial(faults: "", size: medium, arguments: ["--disk-full-after", "1MiB"], sequel: .rerun),
            symptom: .claimsDone(.shorter(by: .some)), fix: .stopsThenRerunVerifies(.localIOFailed), matrix: [],
            hints: [
                "With a full disk the program says \"download finished\" and the file is short. try? turns an error into nothing: which errors does the write throw away?",
                "When a write fails, the download must stop, and the bytes already on disk must stay resumable.",
                "Use try in a do/catch around the write; in the catch, cancel the connection and set outcome = .failed(DownloadError.localIO(path:reason:)), which exits 74.",
            ]),
        Defect(
            id: "status-ignored",
            summary: "the status code is never read: a 404's error page is written as the file",
            source: scenarios("§3, NSFileHandle"),
            trial: Trial(faults: "status:404", size: medium),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under a 404 the error page is written as the file. didReceive response: comes before any data: what does it say about a 404?",
                "Cast the response to HTTPURLResponse and look at statusCode.",
                "Anything other than 200 or 206: cancel the connection and set outcome = .failed(DownloadError.httpStatus(status, url: ...)).",
            ]),
        progressPastTheTotal(source: scenarios("§3, NSFileHandle"), total: "totalDataSize"),
        compressedResume(source: scenarios("§3, NSFileHandle")),
    ], skills: [resumesAfterDrop(brokenBy: ["range-colon"]), resumesAfterKill(brokenBy: ["range-colon"])])

    // MARK: - 03

    static let outputStream = LessonDefects(.outputStream, defects: [
        Defect(
            id: "no-206-check",
            summary: "nothing checks for 206: a 200 with the whole file is appended after the partial one",
            source: resuming("the AFNetworking listing"),
            trial: Trial(faults: "drop:40pct,ignore-range", size: medium),
            symptom: .claimsDone(.longer(by: .bytesBeforeTheBreak)), fix: .verifies, matrix: [.ignoreRange],
            hints: [
                "The file ends up longer by the bytes before the break: the stream appends whatever arrives. What if the server sent the whole file again?",
                "206 is a part; 200 is the whole file from byte 0.",
                "On 200, open the stream without append (or truncate the file) so the body starts at byte 0.",
            ]),
        Defect(
            id: "no-content-range-check",
            summary: "nothing checks Content-Range: a 206 that starts elsewhere is appended anyway",
            source: resuming("the AFNetworking listing"),
            trial: Trial(faults: "drop:40pct,shift-range:-100", size: medium),
            symptom: .claimsDone(.longer(by: .bytes(100))), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "The file ends up too long: a 206 that started before the end of the file was appended anyway. A 206 says where its bytes start: is that where your file ends?",
                "Read Content-Range: bytes <first>-<last>/<total>.",
                "When <first> differs from the local size, append nothing: cancel the connection and set outcome = .failed(DownloadError.contentRangeMismatch(expectedStart:header:)).",
            ]),
        Defect(
            id: "no-validator",
            summary: "no validator is sent: a file that changed on the server is spliced onto the old one",
            source: progress("the Range request"),
            trial: Trial(faults: "drop:40pct,change", size: medium, generation: 1),
            symptom: .claimsDone(.rightSizeWrongBytes), fix: .verifies, matrix: [.entityChanged],
            hints: [
                "The file has the right length and the wrong bytes: the start of one version and the rest of another. Between two attempts the file on the server changed: how would the server know which version you hold?",
                "Keep the ETag of the response that started the file, and send it as If-Range beside Range.",
                "With If-Range the server answers 200 and the new file when it changed: start over on that 200.",
            ]),
        Defect(
            id: "same-size-is-complete",
            summary: "a local file as big as the remote one is taken as complete, with no validator",
            source: progress("the \"already complete\" case"),
            trial: Trial(faults: "ok,change", size: medium, sequel: .rerun, generation: 1),
            symptom: .claimsDone(.rightSizeWrongBytes), fix: .verifies, matrix: [],
            hints: [
                "On the second run the program says the file is already downloaded, and it has the right size and the wrong bytes. Two files can have the same size and different bytes: what proves they are the same?",
                "Only a validator (ETag or Last-Modified) kept from the download that wrote the file proves it.",
                "Without a saved ETag that the server still answers with, download again instead of saying \"already downloaded\".",
            ]),
        Defect(
            id: "write-result-ignored",
            summary: "the return value of write is ignored: a full disk ends in \"download finished\" with a short file",
            source: progress("NSOutputStream writing"),
            trial: Trial(faults: "", size: medium, arguments: ["--disk-full-after", "1MiB"], sequel: .rerun),
            symptom: .claimsDone(.shorter(by: .some)), fix: .stopsThenRerunVerifies(.localIOFailed), matrix: [],
            hints: [
                "With a full disk the program says \"download finished\" and the file is short. OutputStream.write returns a number: what do -1, or fewer bytes than you asked for, mean?",
                "A short or failed write must stop the download; the bytes already written stay for the rerun.",
                "Loop until every byte is written; on -1, cancel the connection and set outcome = .failed(DownloadError.localIO(path:reason:)), which exits 74.",
            ]),
        Defect(
            id: "status-ignored",
            summary: "the status code is never read, and the HEAD's errors are ignored: a 404's page is saved",
            source: progress("the HEAD request"),
            trial: Trial(faults: "status:404", size: medium),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under a 404 the error page is saved as the file. What does the code do with the status of either response?",
                "Cast each response to HTTPURLResponse and look at statusCode.",
                "Anything other than 200 or 206: cancel the connection and set outcome = .failed(DownloadError.httpStatus(status, url: ...)).",
            ]),
        Defect(
            id: "extra-head",
            summary: "every start sends a HEAD first, though Content-Range already carries the total",
            source: progress("the HEAD request"),
            trial: Trial(faults: "", size: medium),
            symptom: .sendsHEAD, fix: .verifies, matrix: [],
            hints: [
                "Count the requests a clean download sends. Which one is not needed?",
                "A 206's Content-Range ends with /<total>; a 200's Content-Length is the total.",
                "Drop the HEAD and take the total from the GET's response.",
            ]),
        progressPastTheTotal(source: progress("the HEAD request"), total: "fileSize"),
        compressedResume(source: progress("the Range request")),
    ], skills: [resumesAfterDrop(), resumesAfterKill()])

    // MARK: - 04

    static let sessionDataTask = LessonDefects(.sessionDataTask, defects: [
        Defect(
            id: "no-206-check",
            summary: "nothing checks for 206: a 200 with the whole file is appended after the partial one",
            source: resuming("the NSURLSessionDataTask listing"),
            trial: Trial(faults: "drop:40pct,ignore-range", size: medium),
            symptom: .claimsDone(.longer(by: .bytesBeforeTheBreak)), fix: .verifies, matrix: [.ignoreRange],
            hints: [
                "The file ends up longer by the bytes before the break: the whole file was appended after the partial one. didReceive response: lets every body through with .allow: should it, whatever the status?",
                "206 is a part; 200 is the whole file from byte 0.",
                "On 200, truncate the file to 0 before the first chunk is written.",
            ]),
        Defect(
            id: "no-validator",
            summary: "no If-Range is sent: a file that changed on the server is spliced onto the old one",
            source: resuming("the NSURLSessionDataTask listing"),
            trial: Trial(faults: "drop:40pct,change", size: medium, generation: 1),
            symptom: .claimsDone(.rightSizeWrongBytes), fix: .verifies, matrix: [.entityChanged],
            hints: [
                "The file has the right length and the wrong bytes: the start of one version and the rest of another. How would the server know which version of the file you hold?",
                "Keep the ETag of the response that started the file, and send it as If-Range beside Range.",
                "With If-Range the server sends 200 and the new file when it changed: start over on that 200.",
            ]),
        Defect(
            id: "no-content-range-check",
            summary: "nothing checks Content-Range: a 206 that starts elsewhere is appended anyway",
            source: resuming("the NSURLSessionDataTask listing"),
            trial: Trial(faults: "drop:40pct,shift-range:-100", size: medium),
            symptom: .claimsDone(.longer(by: .bytes(100))), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "The file ends up too long: a 206 that started before the end of the file was appended anyway. A 206 says where its bytes start: is that where your file ends?",
                "Read Content-Range: bytes <first>-<last>/<total>.",
                "When <first> differs from the local size, answer .cancel and finish with .failed(DownloadError.contentRangeMismatch(expectedStart:header:)).",
            ]),
        Defect(
            id: "status-ignored",
            summary: "the status code is never read: a 404's error page becomes the file",
            source: resuming("the NSURLSessionDataTask listing"),
            trial: Trial(faults: "status:404", size: medium),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under a 404 the error page becomes the file. What does didReceive response: do with a 404?",
                "Cast the response to HTTPURLResponse and look at statusCode.",
                "Outside 200 and 206, answer .cancel and finish with .failed(DownloadError.httpStatus(status, url: ...)).",
            ]),
        Defect(
            id: "write-errors-dropped",
            summary: "write errors are dropped: a full disk ends in \"download finished\" with a short file",
            source: resuming("the NSURLSessionDataTask listing"),
            trial: Trial(faults: "", size: medium, arguments: ["--disk-full-after", "1MiB"], sequel: .rerun),
            symptom: .claimsDone(.shorter(by: .some)), fix: .stopsThenRerunVerifies(.localIOFailed), matrix: [],
            hints: [
                "With a full disk the task finishes as if all went well, and the file is short. Which errors does try? throw away here?",
                "A failed write must stop the task, and the bytes already on disk must stay resumable.",
                "Catch the write's error, cancel the task, and make didCompleteWithError report DownloadError.localIO(path:reason:) (exit 74) instead of success.",
            ]),
        progressPastTheTotal(source: resuming("the NSURLSessionDataTask listing"), total: "totalLength"),
        compressedResume(source: resuming("the NSURLSessionDataTask listing")),
        Defect(
            id: "unknown-length-total",
            summary: "the total is expectedContentLength plus the bytes on disk even when the length is unknown (-1): a chunked resume shows 250%",
            source: resuming("the NSURLSessionDataTask listing"),
            trial: Trial(faults: "chunked+drop:40pct,chunked", size: medium),
            symptom: .misreportsProgress(totalAnnounced: true), fix: .verifies, matrix: [],
            hints: [
                "After the drop the progress passes 100%. The body comes chunked: what is expectedContentLength when the server sends no Content-Length?",
                "-1 means unknown. Adding the bytes on disk to it gives a number that is neither: the file is larger than that.",
                "Take the total from the 206's Content-Range (bytes N-M/<total>), and report -1 when no response says it; PartialFile(run).append(_:through:) does.",
            ]),
    ], skills: [resumesAfterDrop(), resumesAfterKill()])

    // MARK: - 05

    static let downloadTaskResume = LessonDefects(.downloadTaskResume, defects: [
        Defect(
            id: "resume-data-in-memory",
            summary: "the resume data is kept in memory only: after a kill the rerun starts over",
            source: sessionVersusConnection("cancelByProducingResumeData:"),
            // The first transfer runs until Pause (40%); the Resume stalls 512 KiB later, and is killed there.
            trial: Trial(faults: "ok,stall:512KiB", size: 32 << 20, sequel: .killAndRerun),
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
            summary: "the response is never looked at: the download task saves a 404's error page, and it is kept as the file",
            source: sessionVersusConnection("didFinishDownloadingToURL:"),
            trial: Trial(faults: "status:404", size: medium),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under a 404 the error page is kept as the file. A 404 is not an error to a download task: didFinishDownloadingTo gets the error page. What else does the task know?",
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
    ], skills: [resumeDataForAnotherURL])

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
    ], skills: [resumesAfterDrop(everyRun: downloadOnly), resumesAfterKill(everyRun: downloadOnly)])

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
            symptom: .holdsInMemory(moreThan: 1.0), fix: .verifies, matrix: [],
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
            summary: "the response is never looked at: a 404's error page is saved as the file",
            source: asyncTutorials("let (data, _) = try await data(from:)"),
            trial: Trial(faults: "status:404", size: small),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under a 404 the error page is saved as the file. A 404 is not an error to URLSession: data(from:) returns normally. What else does it return?",
                "The response it returns is an HTTPURLResponse; read its statusCode before writing anything.",
                "Outside 200...299, return .failed(DownloadError.httpStatus(status, url: run.url.absoluteString)) and write nothing.",
            ]),
        Defect(
            id: "starts-over",
            summary: "a broken transfer keeps nothing: the next attempt downloads the whole file again",
            source: asyncTutorials("data(from:), then data.write(to:)"),
            trial: Trial(faults: "drop:40pct,ok", size: 16 << 20),
            symptom: .startsOver, fix: .verifies, matrix: [],
            hints: [
                "After the drop, the next request asked for the whole file again. When data(from:) throws, where are the bytes that had already arrived?",
                "run.sharedSession.bodyChunks(for:) returns as soon as the response head is in; its chunks can go to the file as they arrive.",
                "Let PartialFile(run) ask (nextRequest(), with Range and If-Range), judge the answer (decide(_:)) and write (append(_:through:)), as lesson 04 does.",
            ]),
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
    ], skills: [resumesAfterKill(brokenBy: ["starts-over"]), survivesAnIgnoredRange, survivesAChangedFile], tools: [
        "let partial = PartialFile(run)              the file at run.file, with a sidecar that keeps its URL, ETag and total",
        "partial.nextRequest()                       the request for what is missing: Range and If-Range, Accept-Encoding: identity",
        "run.sharedSession.bodyChunks(for: request)  (chunks, response) once the head is in; `for try await chunk in chunks`",
        "partial.decide(response)                    .append(at: offset), .replace (a 200: from 0), .complete, .reject(error)",
        "try partial.openForWriting(at: offset)      a FileHandle from offset on, the rest cut off",
        "try partial.append(chunk, through: handle)  writes a chunk at the end and counts it",
        "partial.finished()                          the file is whole: the sidecar goes",
        "DownloadError.httpStatus(status, url: run.url.absoluteString), .contentRangeMismatch(expectedStart:header:)",
    ])

    // MARK: - 09

    /// The defects of lesson 09's article variant, as background-session code keeps or breaks
    /// Apple's rules. Each trial plays the app's default life (suspended at 20%, ended at 50%)
    /// unless it says otherwise.
    static let backgroundSession = LessonDefects(.backgroundSession, defects: [
        Defect(
            id: "default-session",
            summary: "a default session: the download runs in the app's process, dies with it, and starts over from byte 0",
            source: sessionVersusConnection("the download task, made with defaultSessionConfiguration"),
            trial: Trial(faults: "", size: 8 << 20),
            symptom: .breaksBackgroundRule(.downloadOutlivesTheApp), fix: .verifies, matrix: [],
            hints: [
                "The app was suspended at 20% and ended at 50%, and the server sent the file again from byte 0. Where did the transfer run while the app was gone?",
                "A default session's tasks live in the app's process; only a background session's run in the system's transfer service.",
                "Make the session with URLSessionConfiguration.background(withIdentifier:) and a delegate: run.makeSession(configuration:delegate:delegateQueue:).",
            ]),
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
            summary: "the completion handler of a launch for background events is never called (or not on the main queue)",
            source: sessionVersusConnection("the session delegate"),
            trial: Trial(faults: "", size: 4 << 20),
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
    ], skills: [resumesAfterKill(brokenBy: ["default-session"]), startsOneDownload, resumesWithALimit])

    /// Start tapped again while the download goes on in the service: an app that does not ask
    /// the session for its running tasks first begins the file a second time.
    static let startsOneDownload = Skill(
        id: "starts-one-download",
        summary: "Start, tapped while the download goes on in the background, begins no second download",
        trial: Trial(faults: "", size: 4 << 20, arguments: ["--life", "terminate@30%,start@60%"]),
        symptom: .breaksBackgroundRule(.oneDownloadAtATime), fix: .verifies,
        hints: [
            "The system ended the app at 30%, and at 60% the user opened it and tapped Start: a second download began while the first still ran in the background. What could the app have asked first?",
            "After a relaunch the session's tasks from before may still run in the transfer service; the session lists them.",
            "In startTapped, call session.getAllTasks { tasks in … } and start a download only when tasks is empty.",
        ],
        brokenBy: ["default-session"])

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
        brokenBy: ["default-session"])

    // MARK: - Today's HTTP: compressed bodies and unknown lengths

    /// Progress against `expectedContentLength`, which under gzip is the compressed size while the
    /// code is handed the decoded bytes (lessons 01 to 05).
    /// `faults`: lesson 05 pauses at 40% of what it thinks the total is, so its resume must be
    /// compressed too.
    static func progressPastTheTotal(source: ArticleSection, total: String, faults: FaultScript = "gzip") -> Defect {
        Defect(
            id: "progress-past-total",
            summary: "progress is reckoned against expectedContentLength, the compressed size under gzip: it passes 100% (375% here)",
            source: source,
            trial: Trial(faults: faults, size: medium),
            symptom: .misreportsProgress(totalAnnounced: false), fix: .verifies, matrix: [],
            hints: [
                "Under gzip the progress passes 100%. URLSession asks for gzip by itself and hands over the bytes decoded: what length does the response announce?",
                "With Content-Encoding: gzip, expectedContentLength is the compressed size; the decoded total is unknown (response.expectedDecodedLength says -1 then).",
                "Take \(total) from response.expectedDecodedLength (LabKit) and report -1 when it is unknown; or ask for the file as it is with Accept-Encoding: identity, as PartialFile(run).nextRequest() does.",
            ])
    }

    /// A resume that lets URLSession ask for gzip: a server that compresses ignores Range and sends
    /// the whole file, compressed (nginx does).
    static func compressedResume(source: ArticleSection) -> Defect {
        Defect(
            id: "compressed-resume",
            summary: "resumes accept gzip: a server that compresses ignores Range and sends the whole file again",
            source: source,
            trial: Trial(faults: "gzip+drop:40pct,gzip", size: medium),
            symptom: .doesNotResume, fix: .verifies, matrix: [],
            hints: [
                "Under gzip the request after the drop gets a 200 with the whole file. Which encodings does that request accept? URLSession adds Accept-Encoding itself.",
                "A server that compresses on the fly serves no byte ranges (nginx ignores Range then), and decoded bytes on disk are no offset into compressed ones.",
                "Ask for the file as it is on every request of a download you mean to resume: request.setValue(\"identity\", forHTTPHeaderField: \"Accept-Encoding\"). PartialFile(run).nextRequest() does.",
            ])
    }

    // MARK: - What the resuming lessons teach

    /// After a drop, the next GET asks for the rest of the file, and little comes twice.
    static func resumesAfterDrop(brokenBy: [String] = [], everyRun: [String] = []) -> Skill {
        Skill(
            id: "resumes-after-drop",
            summary: "after a dropped connection, the next request asks for the rest, from the bytes on disk",
            trial: Trial(faults: "drop:50pct,ok", size: 8 << 20, everyRun: everyRun),
            symptom: .startsOver, fix: .verifies,
            hints: [
                "The ✗ line counts the bytes the server sent twice. Where did the second attempt start?",
                "The bytes before the drop are on disk already; only a Range request keeps them. Read the second request the program sends.",
                "Ask for bytes=<size on disk>- (PartialFile(run).nextRequest() does, with If-Range), and append the 206's body to the file.",
            ],
            brokenBy: brokenBy)
    }

    /// After a `kill -9`, the rerun asks for the rest of the file, and little comes twice.
    static func resumesAfterKill(brokenBy: [String] = [], everyRun: [String] = []) -> Skill {
        Skill(
            id: "resumes-after-kill",
            summary: "after kill -9, the next run asks for the rest, from the bytes on disk",
            trial: Trial(faults: "stall:50pct", size: 8 << 20, everyRun: everyRun, sequel: .killAndRerun),
            symptom: .startsOver, fix: .verifies,
            hints: [
                "The ✗ line counts the bytes the server sent twice. Where did the run after the kill start?",
                "A kill gives no warning: what was in memory is gone, but the partial file and anything saved beside it are on disk.",
                "On start, take the size of the partial file (and its saved validator) and ask for bytes=<size>- with If-Range; PartialFile(run).nextRequest() does both.",
            ],
            brokenBy: brokenBy)
    }

    /// A resume that appends whatever answers its Range: a server that ignores Range (a 200 with
    /// the whole file) makes the file longer by what was on disk.
    static let survivesAnIgnoredRange = Skill(
        id: "range-ignored",
        summary: "a server that ignores Range answers 200 with the whole file: it replaces what is on disk, never appended to it",
        trial: Trial(faults: "drop:40pct,ignore-range", size: medium),
        symptom: .claimsDone(.longer(by: .bytesBeforeTheBreak)), fix: .verifies,
        hints: [
            "After the drop the file ends up longer by what was on disk: the server ignored Range and sent the whole file, and it was appended. What does the answer's status say?",
            "206 means \"the part you asked for\"; 200 means \"the whole file from byte 0\". Only a 206 whose Content-Range starts where the file ends continues it.",
            "Let PartialFile(run).decide(response) judge the answer: .append(offset) continues, .replace starts the file again at 0, .reject(error) stops.",
        ],
        brokenBy: [])

    /// A resume without a validator: a file that changed on the server is spliced onto the old one.
    static let survivesAChangedFile = Skill(
        id: "file-changed",
        summary: "the file changed on the server between attempts: If-Range gets the new one whole, never spliced onto the old",
        trial: Trial(faults: "drop:40pct,change", size: medium, generation: 1),
        symptom: nil, fix: .verifies,
        hints: [
            "The file has the right length and the wrong bytes: the start of one version and the rest of another. Between the attempts the file changed on the server: how would it know which version you hold?",
            "Keep the first answer's ETag and send it back as If-Range with the Range: the server answers 206 only while it still matches, else 200 with the new file.",
            "PartialFile(run).nextRequest() sends Range and If-Range from the ETag it kept beside the file; decide(_:) turns the 200 into .replace.",
        ],
        brokenBy: [])

    /// Resume data names the URL it was made for; for another one it is of no use.
    static let resumeDataForAnotherURL = Skill(
        id: "resume-data-for-another-url",
        summary: "resume data saved for another URL is set aside: the download starts over, and succeeds",
        trial: Trial(faults: "ok,stall:512KiB", size: 16 << 20, sequel: .killAndRerunAtAnotherURL),
        symptom: nil, fix: .verifies,
        hints: [
            "The first run's server is gone by the second run, and the file comes from another URL. What does the resume data you kept point at?",
            "A download task made from resume data goes to the URL inside the blob, not to the one you are asked for: task.originalRequest?.url says which.",
            "Before resuming, compare the resumed task's originalRequest?.url with run.url; when they differ, cancel it, delete the blob and start with downloadTask(with: run.url).",
        ],
        brokenBy: [])
}
