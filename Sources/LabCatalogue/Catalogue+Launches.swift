/// Lesson 10: the next launch, and whether it downloads the file again.
import LabVocabulary

extension Catalogue {
    // MARK: - 10

    /// Every trial launches the app twice (`LessonID.launches`); "ok,change" changes the file on
    /// the server, same size, before the second launch's request.
    static let conditionalGet = LessonDefects(.conditionalGet, defects: [
        sameSizeIsCurrent,
        extraHeadEveryLaunch,
        Defect(
            id: "purged-home",
            summary: "the file is kept in Library/Caches, which iOS empties when storage runs low: the next launch downloads it all again",
            source: progress("the file's path"),
            trial: Trial(faults: "", size: medium, arguments: ["--purge-caches"]),
            symptom: .fetchesAgain(requestsAllowed: nil), fix: .verifies, matrix: [],
            hints: [
                "With Library/Caches emptied between the launches, the second one downloaded the whole file again. Where does the file live, and who may delete it?",
                "Caches is for what the app can fetch again and does not mind losing; a file the app means to keep goes to Application Support (excluded from backup when it can be downloaded again).",
                "Save into run.containerURL(for: .applicationSupportDirectory), creating the folder first: iOS does not make it for you.",
            ], cause: .fileKeptIn(["Library/Caches", "tmp"])),
    ], skills: [keepsTheCurrentFile, changedWithinTheSecond], tools: [
        "run.containerURL(for: .applicationSupportDirectory)   the app's folder for files it keeps (create it first)",
        "request.setValue(etag, forHTTPHeaderField: \"If-None-Match\")   304 Not Modified: the file on disk is current",
    ])

    static let sameSizeIsCurrent = Defect(
        id: "same-size-is-current",
        summary: "a file on disk as big as the HEAD's Content-Length is taken as current: a changed file of the same size is never fetched",
        source: progress("the \"already complete\" case"),
        trial: Trial(faults: "ok,change", size: medium, generation: 1),
        symptom: .claimsDone(.rightSizeWrongBytes), fix: .verifies, matrix: [.relaunchChanged],
        hints: [
            "On the second launch the program says the file is already downloaded, and it has the right size and the wrong bytes: the server's file changed in between. What did the program compare?",
            "Only a validator kept from the response that wrote the file (its ETag, or its Last-Modified) tells the server which version you hold.",
            "Save the ETag and Last-Modified beside the file; on the next launch send them as If-None-Match and If-Modified-Since. A 304 keeps the file; a 200 replaces it.",
        ])

    /// Judged by the round trips, not by the method: a one-byte `Range` probe before the GET
    /// costs the same trip as the HEAD. The file changes before the second launch, whose one
    /// request must both ask and bring the new file.
    static let extraHeadEveryLaunch = Defect(
        id: "extra-head",
        summary: "every launch sends a HEAD before deciding, one more round trip; a conditional GET asks and answers in one",
        source: progress("the HEAD request"),
        trial: Trial(faults: "ok,change", size: medium, generation: 1),
        symptom: .roundTrips(moreThan: 2), fix: .verifies, matrix: [],
        hints: [
            "Count the requests of the two launches: the file changed in between, and the second launch needed one answer. Which request does nothing a GET could not do?",
            "A conditional GET asks \"has it changed?\" and brings the new file in the same answer when it has; any probe before it (a HEAD, a one-byte Range) is one more round trip.",
            "Drop the probe: send one GET per launch, with If-None-Match and If-Modified-Since once you have a file and its validators.",
        ])

    static let keepsTheCurrentFile = Skill(
        id: "keeps-the-current-file",
        summary: "a second launch with nothing changed sends one request at most, and no body comes",
        // The second launch's server honours conditional requests and ignores Range, as many
        // dynamic ones do: only If-None-Match gets its "nothing changed" with no body.
        trial: Trial(faults: "ok,ignore-range", size: medium),
        symptom: .bodyWhenCurrent(requestsAllowed: 2), fix: .verifies,
        hints: [
            "Count the requests of the two launches, and the bytes the server sent: the file had not changed. What did the second launch need to know?",
            "One question answers it: \"has the version I hold changed?\", a GET with If-None-Match (the kept ETag) and If-Modified-Since.",
            "Answer 304 with the file kept as it is: nothing to download, nothing to write.",
        ],
        brokenBy: [extraHeadEveryLaunch])

    /// An HTTP-date has whole seconds: a file changed within the second it was dated keeps its
    /// Last-Modified, and only the ETag, a strong validator, says it changed. Code that keeps
    /// only the date (the file's own modification time, `wget -N`'s way) is told "not modified".
    static let changedWithinTheSecond = Skill(
        id: "changed-within-the-second",
        summary: "a file changed within the second it was dated is fetched again: only its ETag says it changed",
        trial: Trial(faults: "ok,change+same-date", size: medium, generation: 1),
        symptom: .claimsDone(.rightSizeWrongBytes), fix: .verifies,
        hints: [
            "The second launch kept a file of the right size with the wrong bytes: the server's file had changed, and its Last-Modified had not. What told your code that nothing changed?",
            "A Last-Modified has whole seconds, so a file changed twice in one second keeps its date. The ETag names the content: it is the validator that cannot miss a change.",
            "Keep the ETag beside the file and send it as If-None-Match (with If-Modified-Since); a server reads If-None-Match first and answers 200 with the new file.",
        ],
        brokenBy: [sameSizeIsCurrent])
}
