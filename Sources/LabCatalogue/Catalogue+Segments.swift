/// Lesson 11: a file in ranges, fetched over several connections at once.
import LabVocabulary

extension Catalogue {
    // MARK: - 11

    /// `faults` over a CDN that paces each connection: the ranges of one run go side by side.
    static func paced(_ faults: FaultScript, size: Int64 = medium) -> FaultScript { faults.pacedPerConnection(forFileOf: size) }

    static let segmented = LessonDefects(.segmented, defects: [
        sharedPosition,
        busyPageSaved,
        Defect(
            id: "spliced-versions",
            summary: "no If-Range and no check of the ETag: ranges of two versions of a file that changed are put together as one",
            source: segmentedPosts("one Range per task, nothing else"),
            trial: Trial(faults: paced("ok,change"), size: medium, generation: 1),
            symptom: .claimsDone(.scrambled), fix: .verifies, matrix: [.entityChanged],
            hints: [
                "The file changed on the server while its ranges were being fetched, and the program put ranges of both versions into one file. What told it they belonged together?",
                "Each 206 carries the version it is of, its ETag (or Last-Modified). Send the first answer's version back as If-Range: a range of any other version comes as a 200 with the whole new file.",
                "Keep the first answer's ETag; ask for every range with If-Range: that ETag; on a 200, stop the ranges and take the whole file from byte 0.",
            ]),
        Defect(
            id: "counts-twice",
            summary: "progress adds up every chunk of every attempt: after a retry it passes 100%",
            source: segmentedPosts("the progress, added up in didReceive data"),
            trial: Trial(faults: paced("drop:40pct"), size: medium),
            symptom: .misreportsProgress(totalAnnounced: false), fix: .verifies, matrix: [],
            hints: [
                "After the drop the progress went past 100%. What does it add up?",
                "Every chunk is counted when it arrives, and the attempt after the break brings some of the same bytes again.",
                "Report the bytes on disk: the sum of what each range has written, whichever attempt brought them.",
            ]),
        startsOverEveryRange,
    ], skills: [rangesSideBySide, resumesEachRange, waitsRetryAfter], tools: [
        "configuration.httpMaximumConnectionsPerHost = run.connections   at most that many connections at once",
        "FileHandle(forWritingTo: run.file) per range, then seek(toOffset:)   a write position of its own",
        "handle.truncate(atOffset: total)   the file at its full size before any range writes",
        "task.taskDescription   a name for the range a task fills, read back in its callbacks",
    ])

    static let busyPageSaved = Defect(
        id: "busy-page-saved",
        summary: "the status is never read: a 503 from a server that allows fewer connections is written into the file as a range",
        source: segmentedPosts("the response callback, which allows every answer"),
        trial: Trial(faults: paced("connections:2*100"), size: medium),
        symptom: .claimsDone(.scrambled), fix: .verifies, matrix: [],
        hints: [
            "The server allows two downloads of the file at once, and the program asks for four. What came back for the other two, and where did it go?",
            "A 503 Service Unavailable, a few bytes of text, was allowed through and written as the range.",
            "Refuse anything but a 206 for the range asked for; keep a range answered 503 for later, and ask for it again once its Retry-After has passed.",
        ], cause: .busyPageInTheFile)

    /// A range refused with 503 and `Retry-After: 1` must not be asked for again sooner: a
    /// server that limits connections is not helped by a client that hammers it.
    static let waitsRetryAfter = Skill(
        id: "waits-retry-after",
        summary: "a range answered 503 with Retry-After is not asked for again before that time has passed",
        trial: Trial(faults: paced("connections:2*100"), size: medium, arguments: ["--connections", String(rangesAsked)]),
        symptom: .ignoresRetryAfter, fix: .verifies,
        hints: [
            "The server allows two downloads of the file at once and said when to try again; the program asked for a refused range again sooner. Read the 503's headers.",
            "Retry-After: 1 means one second from the answer; a range asked again at once meets the same limit, and a server counts such a client against it.",
            "Keep a refused range aside with the time it may go again (now plus Retry-After), and start it when that time has passed and a connection is free.",
        ],
        brokenBy: [busyPageSaved])

    static let sharedPosition = Defect(
        id: "shared-position",
        summary: "every range is written through one FileHandle: each response's seek moves its one write position, and the next chunk of any range lands there",
        source: segmentedPosts("one FileHandle, a seek when each range's response arrives"),
        trial: Trial(faults: paced(.none), size: medium),
        symptom: .claimsDone(.scrambled), fix: .verifies, matrix: [.clean, .dropResume, .killRerun, .ignoreRange, .slowDisk, .relaunch, .relaunchChanged],
        hints: [
            "With four ranges arriving side by side, the file comes out wrong although every byte arrived. Where does each chunk go when it is written?",
            "A FileHandle has one write position. A seek for one range moves it for all of them, and chunks of the ranges arrive interleaved.",
            "Give each range a FileHandle of its own, opened for writing and seeked once to where that range continues; write its chunks only through it.",
        ])

    /// The ranges this check asks for, and expects to see side by side at the server.
    static let rangesAsked = 4

    static let rangesSideBySide = Skill(
        id: "ranges-side-by-side",
        summary: "with --connections \(rangesAsked), the file comes in ranges fetched at once (the first MiB, then the rest split up), not in one stream",
        trial: Trial(faults: paced(.none), size: medium, arguments: ["--connections", String(rangesAsked)]),
        symptom: .notSideBySide(ranges: rangesAsked), fix: .verifies,
        hints: [
            "Every connection is paced, so one stream is as slow as one connection. How many of the file's GETs did the server answer at once?",
            "Only ranges fetched side by side multiply the pace: split the file into --connections ranges and start a task for each, on a session that allows that many connections to the host.",
            "After the first answer gives the size, make the plan: the first MiB you asked for, then the rest split into --connections ranges of about the same length (none under 1 MiB); start them all, with httpMaximumConnectionsPerHost = run.connections.",
        ],
        brokenBy: [sharedPosition])

    static let resumesEachRange = Skill(
        id: "resumes-each-range",
        summary: "after kill -9 at a stall and a rerun, each range continues where it stopped: at most 1 MiB comes twice",
        // Every range, the first included, stops part-way, past a saved plan's step: no range
        // has ended when the kill comes, so a plan saved only when a range ends has nothing
        // and loses more than 1 MiB; one saved as the bytes are written loses a little of each.
        // (4 MiB in the default 4 connections: the first MiB, then three ranges of 1 MiB.)
        trial: Trial(faults: paced("stall:60pct*4"), size: medium, sequel: .killAndRerun),
        symptom: .fetchesAgain(requestsAllowed: nil), fix: .verifies,
        hints: [
            "Killed at the stall and run again, the program fetched what it already had. What did the killed run leave beside the file?",
            "Nothing tells the next run which ranges were on disk and how far each one got; and nothing tells it they are of the same version.",
            "Keep a plan beside the file (the total, the validator, each range's first and last byte and how much of it is written), save it as the bytes are written, and on launch ask only for the rest of each range, with If-Range.",
        ],
        brokenBy: [startsOverEveryRange])

    static let startsOverEveryRange = Defect(
        id: "starts-over",
        summary: "nothing is kept between attempts: after one range's connection drops, every range is fetched again",
        source: segmentedPosts("a new file and new ranges on every start"),
        // One range, so that the file verifies and the bytes fetched twice are the whole story.
        trial: Trial(faults: paced("drop:40pct"), size: medium, arguments: ["--connections", "1"]),
        symptom: .fetchesAgain(requestsAllowed: nil), fix: .verifies, matrix: [],
        hints: [
            "After one range's connection dropped, the next attempt fetched every range again. What did it know of the ranges already written?",
            "Each range can continue on its own: its first byte plus what it has written is where its next request starts.",
            "Keep each range's progress, and on Resume start a request only for each range that is not complete, from where it stopped.",
        ])
}
