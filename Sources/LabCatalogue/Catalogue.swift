/// Every lesson's defects, declared once: lessons 00 to 04 here, 05 to 09 in Catalogue+Apps.swift,
/// 10 in Catalogue+Launches.swift, 11 in Catalogue+Segments.swift,
/// the defects and skills several lessons share in SharedDefects.swift.
import LabVocabulary

/// Every lesson's defects. Each symptom is the one the article variant shows in the trial; the
/// end-to-end tests run every trial on both variants and hold them to it.
public enum Catalogue {
    /// In the lessons' order.
    public static let lessons: [LessonDefects] = LessonID.allCases.map(lesson)

    /// The largest file any check downloads: a check's `--max-filesize` is reckoned from it, the
    /// same for every check, so the limit tells a program nothing about the file it is given.
    /// A seed may make a file larger, never smaller (`CheckSeed.sizeSixteenths`).
    public static let largestTrialSize: Int64 = (lessons.flatMap(\.everyCheck).map(\.trial.size).max() ?? 0)
        * CheckSeed.sizeSixteenths.max()! / 16

    /// Accepts any of the names `LessonID(named:)` reads.
    public static func lesson(named name: String) -> LessonDefects? {
        LessonID(named: name).map(lesson)
    }

    /// A lesson's entry. No `default`: a new lesson does not compile without one.
    public static func lesson(_ id: LessonID) -> LessonDefects {
        switch id {
        case .smallFile: smallFile
        case .inMemory: inMemory
        case .fileHandle: fileHandle
        case .outputStream: outputStream
        case .sessionDataTask: sessionDataTask
        case .downloadTaskResume: downloadTaskResume
        case .runLoopThread: runLoopThread
        case .multipartUpload: multipartUpload
        case .asyncAwait: asyncAwait
        case .backgroundSession: backgroundSession
        case .conditionalGet: conditionalGet
        case .segmented: segmented
        }
    }

    static func scenarios(_ section: String) -> ArticleSection { ArticleSection(title: "网络篇 - 03.NSURLConnection应用场景", section: section) }
    static func progress(_ section: String) -> ArticleSection { ArticleSection(title: "NSURLConnection下载文件并监测下载进度", section: section) }
    static func sessionVersusConnection(_ section: String) -> ArticleSection { ArticleSection(title: "NSURLSession VS NSURLConnection", section: section) }
    static func resuming(_ section: String) -> ArticleSection { ArticleSection(title: "iOS 断点续传", section: section) }
    static func urlGuide(_ section: String) -> ArticleSection { ArticleSection(title: "IOS如何根据URL下载内容", section: section) }
    /// Lesson 11 has no source article either: its article variant is the way blog posts split a download.
    static func segmentedPosts(_ section: String) -> ArticleSection { ArticleSection(title: "Segmented downloads, as blog posts write them", section: section) }
    /// Lesson 08 has no source article: its article variant is the one-liner tutorials show.
    static func asyncTutorials(_ section: String) -> ArticleSection { ArticleSection(title: "URLSession async/await, as tutorials write it", section: section) }

    static let small: Int64 = 1 << 20
    static let medium: Int64 = 4 << 20

    // MARK: - 00

    static let smallFile = LessonDefects(.smallFile, correctedRefusesAbove: 64 << 20, defects: [
        Defect(
            id: "status-ignored",
            summary: "the status code is never read: an error status's page is saved as the file",
            source: scenarios("§1, the completion handler"),
            trial: Trial(faults: "status:404", size: small),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under an error status (a 404, a 410: the ✗ line names the one played) the program calls the server's error page the file. The completion handler gets a response as well as the data: what does a 404 look like there?",
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
            // A whole number of 4 KiB blocks short, as a body cut at a buffer's edge is: the
            // length, not the body's shape, tells that it is short.
            trial: Trial(faults: "bad-length:-4096", size: small),
            symptom: .claimsDone(.shorter(by: .bytes(4096))), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "The file is 4,096 bytes short, and the program calls it done. The server announced a length: did the body have it?",
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
            summary: "the status code is never read: an error status's page becomes the file",
            source: urlGuide("the NSURLConnection delegate with NSMutableData"),
            trial: Trial(faults: "status:404", size: small),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under an error status (a 404, a 410: the ✗ line names the one played) the error page becomes the file. didReceive response: is the first callback: what could it tell you about a 404?",
                "Cast the response to HTTPURLResponse and keep its statusCode.",
                "Outside 200...299, cancel the connection and call finish(.failed(DownloadError.httpStatus(status, url: ...))).",
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
        rangeColon,
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
                "When <first> is not the size on disk, append nothing: cancel the connection and call finish(.failed(DownloadError.contentRangeMismatch(expectedStart:header:))).",
            ]),
        fileHandleNoValidator,
        Defect(
            id: "write-errors-dropped",
            summary: "write errors are dropped: a full disk ends in \"download finished\" with a short file",
            source: scenarios("§3, NSFileHandle"),
            trial: Trial(faults: "", size: medium, arguments: ["--disk-full-after", "1MiB"], sequel: .rerun),
            symptom: .claimsDone(.shorter(by: .some)), fix: .stopsThenRerunVerifies(.localIOFailed), matrix: [],
            hints: [
                "With a full disk the program says \"download finished\" and the file is short. try? turns an error into nothing: which errors does the write throw away?",
                "When a write fails, the download must stop, and the bytes already on disk must stay resumable.",
                "Use try in a do/catch around the write; in the catch, cancel the connection and call finish(.failed(DownloadError.localIO(path:reason:))), which exits 74.",
            ]),
        Defect(
            id: "status-ignored",
            summary: "the status code is never read: an error status's page is written as the file",
            source: scenarios("§3, NSFileHandle"),
            trial: Trial(faults: "status:404", size: medium),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under an error status (a 404, a 410: the ✗ line names the one played) the error page is written as the file. didReceive response: comes before any data: what does it say about a 404?",
                "Cast the response to HTTPURLResponse and look at statusCode.",
                "Anything other than 200 or 206: cancel the connection and call finish(.failed(DownloadError.httpStatus(status, url: ...))).",
            ]),
        progressPastTheTotal(source: scenarios("§3, NSFileHandle"), total: "totalDataSize"),
        compressedResume(source: scenarios("§3, NSFileHandle")),
    ], skills: [resumesAfterDrop(brokenBy: [rangeColon]), resumesAfterKill(brokenBy: [rangeColon]), changedAcrossKill(brokenBy: [rangeColon, fileHandleNoValidator])],
       tools: partialFileTools(writing: throughAHandle))

    static let rangeColon = Defect(
        id: "range-colon",
        summary: "the Range header is written bytes:N- with a colon, so servers ignore it and send the whole file",
        source: scenarios("§3, NSFileHandle"),
        trial: Trial(faults: "drop:40pct,ok", size: medium),
        symptom: .claimsDone(.longer(by: .bytesBeforeTheBreak)), fix: .verifies,
        matrix: [.dropResume, .killRerun, .ignoreRange, .entityChanged, .relaunch, .relaunchChanged],
        hints: [
            "After the drop the file ends up longer by the bytes before the break: the whole file came again and was appended. Read the Range header the second attempt sends, character by character.",
            "RFC 9110 writes a byte range as bytes=N-. Compare it with what the code sends.",
            "Change \"bytes:\\(localSize)-\" to \"bytes=\\(localSize)-\".",
        ])

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
                "When <first> differs from the local size, append nothing: cancel the connection and call finish(.failed(DownloadError.contentRangeMismatch(expectedStart:header:))).",
            ]),
        outputStreamNoValidator,
        Defect(
            id: "same-size-is-complete",
            summary: "a local file as big as the remote one is taken as complete, with no validator",
            source: progress("the \"already complete\" case"),
            trial: Trial(faults: "ok,change", size: medium, sequel: .rerun, generation: 1),
            symptom: .claimsDone(.rightSizeWrongBytes), fix: .verifies, matrix: [.relaunchChanged],
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
                "Loop until every byte is written; on -1, cancel the connection and call finish(.failed(DownloadError.localIO(path:reason:))), which exits 74.",
            ]),
        Defect(
            id: "status-ignored",
            summary: "the status code is never read, and the HEAD's errors are ignored: an error status's page is saved",
            source: progress("the HEAD request"),
            trial: Trial(faults: "status:404", size: medium),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under an error status (a 404, a 410: the ✗ line names the one played) the error page is saved as the file. What does the code do with the status of either response?",
                "Cast each response to HTTPURLResponse and look at statusCode.",
                "Anything other than 200 or 206: cancel the connection and call finish(.failed(DownloadError.httpStatus(status, url: ...))).",
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
    ], skills: [resumesAfterDrop(), resumesAfterKill(), changedAcrossKill(brokenBy: [outputStreamNoValidator])], tools: partialFileTools(writing: [
        "OutputStream(toFileAtPath: run.file.path, append: true)  after .append(at:); append: false after .replace",
        "try partial.append(data, through: output)   writes all of the bytes (write may take fewer), or throws .localIO",
    ]))

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
        dataTaskNoValidator,
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
            summary: "the status code is never read: an error status's page becomes the file",
            source: resuming("the NSURLSessionDataTask listing"),
            trial: Trial(faults: "status:404", size: medium),
            symptom: .claimsDone(.errorPage), fix: .verifiesOrStops(.transferFailed), matrix: [],
            hints: [
                "Under an error status (a 404, a 410: the ✗ line names the one played) the error page becomes the file. What does didReceive response: do with a 404?",
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
    ], skills: [resumesAfterDrop(), resumesAfterKill(), changedAcrossKill(brokenBy: [dataTaskNoValidator])], tools: partialFileTools(writing: throughAHandle))

    static let outputStreamNoValidator = Defect(
        id: "no-validator",
        summary: "no validator is sent: a file that changed on the server is spliced onto the old one",
        source: progress("the Range request"),
        trial: Trial(faults: "drop:40pct,change", size: medium, generation: 1),
        symptom: .claimsDone(.rightSizeWrongBytes), fix: .verifies, matrix: [.entityChanged],
        hints: [
            "The file has the right length and the wrong bytes: the start of one version and the rest of another. Between two attempts the file on the server changed: how would the server know which version you hold?",
            "Keep the ETag of the response that started the file, and send it as If-Range beside Range.",
            "With If-Range the server answers 200 and the new file when it changed: start over on that 200.",
        ])

    static let dataTaskNoValidator = Defect(
        id: "no-validator",
        summary: "no If-Range is sent: a file that changed on the server is spliced onto the old one",
        source: resuming("the NSURLSessionDataTask listing"),
        trial: Trial(faults: "drop:40pct,change", size: medium, generation: 1),
        symptom: .claimsDone(.rightSizeWrongBytes), fix: .verifies, matrix: [.entityChanged, .relaunchChanged],
        hints: [
            "The file has the right length and the wrong bytes: the start of one version and the rest of another. How would the server know which version of the file you hold?",
            "Keep the ETag of the response that started the file, and send it as If-Range beside Range.",
            "With If-Range the server sends 200 and the new file when it changed: start over on that 200.",
        ])

    static let fileHandleNoValidator = Defect(
        id: "no-validator",
        summary: "no validator is sent: a file that changed on the server is spliced onto the old one",
        source: resuming("the NSURLConnection listing"),
        trial: Trial(faults: "drop:40pct,change", size: medium, generation: 1),
        symptom: .claimsDone(.longer(by: .bytesBeforeTheBreak)), fix: .verifies, matrix: [],
        hints: [
            "The file has the right length and the wrong bytes: the start of one version and the rest of another. Between two attempts the file on the server changed: how would the server know which version you hold?",
            "Keep the first response's ETag (or Last-Modified), and send it back as If-Range with the Range.",
            "If-Range makes the server answer 200 with the new file when the ETag no longer matches; handle that 200 by starting over.",
        ])
}
