/// Defects and skills several lessons share: today's HTTP, and what the resuming lessons teach.
import LabVocabulary

extension Catalogue {
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
    static func resumesAfterDrop(brokenBy: [Defect] = [], everyRun: [String] = []) -> Skill {
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
    static func resumesAfterKill(brokenBy: [Defect] = [], everyRun: [String] = []) -> Skill {
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

    /// A resume after `kill -9` whose validator lived only in memory: nothing the rerun holds
    /// says which version the partial file is, and the file changed on the server meanwhile.
    static func changedAcrossKill(brokenBy: [Defect] = [], everyRun: [String] = []) -> Skill { Skill(
        id: "changed-across-kill",
        summary: "the file changed on the server while the program was killed: the rerun gets the new one whole, never spliced onto the old",
        trial: Trial(faults: "stall:50pct,change", size: 8 << 20, everyRun: everyRun, sequel: .killAndRerun, generation: 1),
        symptom: nil, fix: .verifies,
        hints: [
            "After the kill the file changed on the server, and the rerun made one file of the old start and the new rest. What did the rerun know of the version it held?",
            "A kill loses what was in memory: the ETag that proves which version the partial file is must be on disk beside it, written when the first answer came.",
            "PartialFile(run) keeps the URL, ETag and total in a sidecar; nextRequest() sends them back as If-Range, and decide(_:) turns the 200 of a changed file into .replace.",
        ],
        brokenBy: brokenBy)
    }

    /// Resume data names the URL it was made for; for another one it is of no use.
    static let resumeDataForAnotherURL = Skill(
        id: "resume-data-for-another-url",
        summary: "resume data saved for another URL is set aside: the download starts over, and succeeds",
        trial: Trial(faults: "stall:55pct,stall:512KiB", size: 16 << 20, sequel: .killAndRerunAtAnotherURL),
        symptom: nil, fix: .verifies,
        hints: [
            "The second run is asked for the file at another URL; the first run's address now answers with another file. What does the resume data you kept point at?",
            "A download task made from resume data goes to the URL inside the blob, not to the one you are asked for: task.originalRequest?.url says which.",
            "Before resuming, compare the resumed task's originalRequest?.url with run.url; when they differ, cancel it, delete the blob and start with downloadTask(with: run.url).",
        ],
        brokenBy: [])

    /// An app keeps its resume data with its own files. A new install has none of them, so it
    /// starts over; one that resumes found something kept elsewhere on the machine.
    static let newInstallStartsOver = Skill(
        id: "new-install-starts-over",
        summary: "a new install, with folders of its own, starts the download over: nothing it finds outside them is its to resume",
        trial: Trial(faults: "stall:55pct,stall:512KiB", size: 16 << 20, sequel: .killAndRerunAsANewInstall),
        symptom: .resumesAnotherInstall, fix: .verifies,
        hints: [
            "The rerun was a new install, with another output folder, and it resumed all the same. Where did it find the resume data?",
            "An app keeps its files in its own folder (on iOS, its container): the output folder here. TMPDIR, /tmp or your home folder is shared by every program of the user, and belongs to no install.",
            "Keep the blob beside the output (run.file.appendingPathComponent(...)), never at a fixed path or in the system's temporary folder (TMPDIR).",
        ],
        brokenBy: [])
}
