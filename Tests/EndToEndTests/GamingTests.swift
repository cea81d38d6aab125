import Foundation
import LabCatalogue
import LabKit
import LabVocabulary
import Testing

/// The gaming suite: cheats a student could try that skip what a lesson teaches, each applied to
/// the lesson's corrected code, where it must fail the check that proves the skill. Each passed
/// every check of its exercise before that check existed.
struct GamingTests {
    /// 08: `Range: bytes=<size on disk>-` sent blind, with no If-Range and no look at
    /// Content-Range or at 200 against 206: whatever a 2xx brings is appended. A 200 with the whole file makes it
    /// longer; a file that changed is spliced.
    @Test func aBlindRangeFailsExercise08() async throws {
        try await ExerciseTests.takingTurns {
            let records = try ExerciseTests.checkCorrected("08", replacing: """
                                let (chunks, response) = try await run.sharedSession.bodyChunks(for: partial.nextRequest())
                                guard let file = try openForTheBody(of: response, partial) else { return .finished }
                                defer { try? file.close() }
                                for try await chunk in chunks {
                                    try partial.append(chunk, through: file)
                """, with: """
                                var request = URLRequest(url: run.url)
                                let onDiskNow = PartialFile.size(of: run.file)
                                if onDiskNow > 0 { request.setValue("bytes=\\(onDiskNow)-", forHTTPHeaderField: "Range") }
                                let (chunks, response) = try await run.sharedSession.bodyChunks(for: request)
                                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                                guard (200...299).contains(status) else { return .failed(DownloadError.httpStatus(status, url: run.url.absoluteString)) }
                                if onDiskNow == 0 { FileManager.default.createFile(atPath: run.file.path, contents: nil) }
                                let file = try FileHandle(forWritingTo: run.file)
                                defer { try? file.close() }
                                try file.seekToEnd()
                                for try await chunk in chunks {
                                    try file.write(contentsOf: chunk)
                """)
            #expect(Set(records.filter { !$0.passed }.map(\.check)) == ["range-ignored", "file-changed", "changed-across-kill"], "\(records)")
        }
    }

    /// 09: the system's completion handler called as soon as it is handed over, and
    /// `urlSessionDidFinishEvents` gone: the system would suspend the app before the events are in.
    @Test func aHandlerCalledAtOnceFailsExercise09() async throws {
        let seen = try await Self.see("09", "handler-never-called", cheating: [
            ("        backgroundCompletionHandler = completionHandler\n", "        completionHandler()\n"),
            ("            self.backgroundCompletionHandler?()\n", ""),
        ])
        #expect(seen.stdout.contains("the completion handler was called before the session had delivered its events"), "\(seen.stdout)")
    }

    /// 09: Start downloads at once, without asking the session what still runs: after a
    /// relaunch, a second download of the file begins beside the one in the background.
    @Test func aStartThatAsksNothingFailsExercise09() async throws {
        let seen = try await Self.see("09", "starts-one-download", cheating: [("""
                    session.getAllTasks { tasks in
                        guard tasks.isEmpty else { return self.run.log("a download is running already, in the background") }
                        self.session.downloadTask(with: self.run.url).resume()
                    }

            """, "        session.downloadTask(with: run.url).resume()\n")])
        #expect(seen.stdout.contains("2 downloads were given to the transfer service: Start began another while one was running"), "\(seen.stdout)")
    }

    /// 00: the fault read from the URL (`faults=status:404`) and refused there, the status never
    /// looked at. The checker's URLs are sealed: nothing in them names the fault.
    @Test func aFaultReadFromTheURLFailsExercise00() async throws {
        let sniffs = "run.url.absoluteString.contains(\"faults=status\")"
        let seen = try await Self.see("00", "status-ignored", cheating: [
            ("response.statusCode == 200 else {", "!\(sniffs) else {"),
            ("response.statusCode != 200 {", "\(sniffs) {"),
        ])
        #expect(seen.stdout.contains("the server's error page saved as the file"), "\(seen.stdout)")
    }

    /// 01: the progress held at 100% against the compressed length instead of reckoned against
    /// the file's: it never passes 100%, and every report but the last is wrong.
    @Test func progressHeldUnder100PercentFailsExercise01() async throws {
        let seen = try await Self.see("01", "progress-past-total", cheating: [
            ("    private var expectedLength: Int64 = -1\n", "    private var expectedLength: Int64 = -1\n    private var announced: Int64 = -1\n"),
            ("        received = Data()\n        if expectedLength > 0",
             "        announced = response.expectedContentLength\n        received = Data()\n        if expectedLength > 0"),
            ("run.progress.update(received: Int64(received.count), expected: expectedLength)",
             "run.progress.update(received: min(Int64(received.count), announced), expected: announced)"),
        ])
        #expect(seen.stdout.contains("progress was reckoned against"), "\(seen.stdout)")
    }

    /// 02: every attempt asks for the whole file, so no answer can be spliced wrongly: nothing
    /// is ever resumed.
    @Test func startingOverEachTimeFailsExercise02() async throws {
        let seen = try await Self.see("02", "resumes-after-drop", cheating: [
            ("URLConnection(request: partial.nextRequest(), delegate: self)", "URLConnection(request: URLRequest(url: run.url), delegate: self)"),
        ])
        #expect(seen.stdout.contains("the request after the break asked for"), "\(seen.stdout)")
    }

    /// 03: the validator kept in memory only (here: the sidecar that holds it thrown away at
    /// launch). After a kill nothing proves the partial file is the same file, so it starts over.
    @Test func aValidatorKeptInMemoryFailsExercise03() async throws {
        _ = try await Self.see("03", "resumes-after-kill", cheating: [
            ("        known = ResumeState.load(for: run.file)", "        ResumeState.remove(for: run.file)\n        known = ResumeState.load(for: run.file)"),
        ])
    }

    /// 04: every progress report says the total is unknown (-1), so none can pass 100%; yet
    /// after the break the 206's Content-Range gives it.
    @Test func aTotalAlwaysUnknownFailsExercise04() async throws {
        let seen = try await Self.see("04", "unknown-length-total", cheating: [
            ("        partial = PartialFile(run)\n", """
                    let progress = run.progress
                    partial = PartialFile(url: run.url, file: run.file, log: run.log,
                                          reportProgress: { received, _ in progress.update(received: received, expected: -1) })

            """),
        ])
        #expect(seen.stdout.contains("no report gave the total"), "\(seen.stdout)")
    }

    /// 05: saved resume data ignored at launch, which also keeps it from being used for another
    /// URL: after a kill the rerun starts over.
    @Test func resumeDataIgnoredAtLaunchFailsExercise05() async throws {
        _ = try await Self.see("05", "resume-data-in-memory", cheating: [
            ("guard let resumeData = try? Data(contentsOf: resumeDataFile) else", "guard let resumeData = nil as Data? else"),
        ])
    }

    /// 06: nothing started in the background: the connection runs in its caller's run loop, and
    /// "start in the background" would return when the transfer is over. The caller's run loop
    /// never returns (a main thread's has more to do), so the run hangs and the check times out.
    /// A serial queue of its own passes, and rightly: libdispatch gives each serial queue an
    /// overcommitting thread, a thread of its own in effect.
    @Test func aStartThatWaitsFailsExercise06() async throws {
        let seen = try await Self.see("06", "clean", cheating: [
            ("        Thread {\n            nameThisThread(threadName)", "        do {\n            nameThisThread(threadName)"),
            ("            leftRunLoop()\n        }.start()", "            leftRunLoop()\n        }"),
        ], ["--timeout", "4"])
        #expect(seen.stdout.contains("timed out: still running after 4 s"), "\(seen.stdout)")
    }

    /// 07: the file memory-mapped rather than read, then joined with the body's head and tail:
    /// the join copies it, so the whole body is in memory after all.
    @Test func aMappedFileJoinedFailsExercise07() async throws {
        let seen = try await Self.see("07", "body-in-memory", cheating: [
            ("            let writer = MultipartBodyWriter(body, file: run.file)\n", """
                        let mapped = (try? Data(contentsOf: run.file, options: .alwaysMapped)) ?? Data()
                        let whole = body.head + mapped + body.tail

            """),
            ("UploadExchange(run, bodyBytes: length, bodyStream: writer.newStream)",
             "UploadExchange(run, bodyBytes: length, bodyStream: { InputStream(data: whole) })"),
            ("completion(writer.failure.map { .failed($0) } ?? sent.check(run, sent: fixture))", "completion(sent.check(run, sent: fixture))"),
        ])
        #expect(seen.stdout.contains("peak memory"), "\(seen.stdout)")
    }

    /// 09: every failure the system reports resumed again from its resume data, without a limit:
    /// against a server that stays broken, the app never stops.
    @Test func resumingForEverFailsExercise09() async throws {
        let seen = try await Self.see("09", "resumes-with-a-limit", cheating: [
            ("if let resumeData = error.downloadTaskResumeData, resumesLeft > 0 {", "if let resumeData = error.downloadTaskResumeData {"),
        ])
        #expect(seen.stdout.contains("every failure was resumed again"), "\(seen.stdout)")
    }

    /// 09's starting code with only its session made a background one: the relaunched app still
    /// makes no session to hear its events, so moving the file, a force-quit's cancellation and
    /// a second session never come up. Those checks are "not reached", and earn nothing, until
    /// no-session-at-launch is fixed.
    @Test func checksHiddenByAnotherFailureAreNotReached() async throws {
        let records = try await ExerciseTests.takingTurns {
            let lesson = Catalogue.lesson(.backgroundSession)
            var files = Dictionary(uniqueKeysWithValues: try ExerciseTests.startingFiles(lesson).map { ($0.name, $0.text) })
            let student = try #require(files[ExerciseSource.studentFile])
            let piece = "run.makeSession(configuration: .default,"
            try #require(student.contains(piece))
            files[ExerciseSource.studentFile] = student.replacingOccurrences(
                of: piece, with: "run.makeSession(configuration: .background(withIdentifier: App.sessionIdentifier),")
            let finished = try ExerciseTests.withExerciseFiles(lesson, holding: files) { try ExerciseTests.lab(["exercise", "check", "09", "--json"]) }
            return try ExerciseTests.records(finished.stdout)
        }
        let notReached = records.filter { $0.status == .notReached }
        #expect(Set(notReached.map(\.check)) == ["file-moved-later", "retries-force-quit", "session-per-download"], "\(records)")
        #expect(notReached.allSatisfy { !$0.passed && $0.detail.hasPrefix("not reached: events were left waiting") && $0.detail.contains("(no-session-at-launch)") })
        #expect(records.first { $0.check == "no-session-at-launch" }?.status == .stillThere)
    }

    /// 10: every launch downloads the whole file, with no question asked, so no stale file is
    /// ever kept: the unchanged second launch brings the file again.
    @Test func downloadingEveryLaunchFailsExercise10() async throws {
        try await ExerciseTests.takingTurns {
            let records = try ExerciseTests.checkCorrected("10", replacing: "        if let kept = keptValidators() {",
                                                           with: "        if let kept = Optional<Validators>.none {")
            // The clean run's two launches may download the file once: this one downloads it twice.
            #expect(Set(records.filter { !$0.passed }.map(\.check)) == ["clean", "purged-home", "keeps-the-current-file"], "\(records)")
        }
    }

    /// 10: a file on disk is never fetched again, so nothing is downloaded twice: a changed file
    /// is kept as it was.
    @Test func neverAskingAgainFailsExercise10() async throws {
        let seen = try await Self.see("10", "same-size-is-current", cheating: [("        (failure, self.completion) = (nil, completion)\n", """
                    (failure, self.completion) = (nil, completion)
                    if FileManager.default.fileExists(atPath: file.path) {
                        run.saved(file)
                        return completion(.finished)
                    }

            """)])
        #expect(seen.stdout.contains("right size, wrong bytes"), "\(seen.stdout)")
    }

    /// 11: everything after the first MiB as one range: the plan is kept, each range resumes and
    /// no versions are spliced, so every defect's check passes; but one stream at a time is as
    /// slow as one paced connection.
    @Test func oneRangeAfterTheFirstFailsExercise11() async throws {
        try await ExerciseTests.takingTurns {
            let records = try ExerciseTests.checkCorrected("11", replacing: "into: validator == nil ? 1 : run.connections,", with: "into: 1,")
            #expect(records.filter { !$0.passed }.map(\.check) == ["ranges-side-by-side"], "\(records)")
        }
    }

    /// `lab exercise see` of one check, on the lesson's corrected code with `edits` made to the
    /// student's file: the check must fail (✗, exit 1), not the build.
    static func see(_ number: String, _ check: String, cheating edits: [(String, String)], _ options: [String] = []) async throws -> ChildProcess.Finished {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: number))
            var files = try ExerciseTests.correctedFiles(lesson)
            var student = try #require(files[ExerciseSource.studentFile])
            for (piece, replacement) in edits {
                try #require(student.contains(piece), "\(piece)")
                student = student.replacingOccurrences(of: piece, with: replacement)
            }
            files[ExerciseSource.studentFile] = student
            let seen = try ExerciseTests.withExerciseFiles(lesson, holding: files) {
                try ExerciseTests.lab(["exercise", "see", number, check] + options)
            }
            #expect(seen.status == 1 && seen.stdout.contains("✗ \(check)"), "\(seen.stdout)\n\(seen.stderr)")
            return seen
        }
    }
}
