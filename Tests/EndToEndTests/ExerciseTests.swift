import Foundation
import LabFixtures
import LabCatalogue
import LabKit
import LabVocabulary
import TestThreads
import Testing

/// `lab exercise`, run as a process from the package folder, building real exercise code and
/// checking it against the lab server. The suite edits the files under Sources/Exercises, and
/// the progress file a student's `lab exercise` reads, and puts back what was there: its tests
/// run one at a time.
@Suite(.serialized) final class ExerciseTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let progressFile = packageRoot.appendingPathComponent(".build/lab-exercises/progress.json")

    @Test func startingCodeIsMadeFromTheArticleVariant() async throws {
        try await ExerciseTests.takingTurns { try startingCodeOfEveryExerciseIsMadeFromItsArticle() }
    }

    private func startingCodeOfEveryExerciseIsMadeFromItsArticle() throws {
        for lesson in Catalogue.lessons {
            let folder = Self.packageRoot.appendingPathComponent(ExerciseSource.folder(for: lesson))
            let made = try Self.startingFiles(lesson)
            let committed = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
            #expect(committed == made.map(\.name).sorted(), "\(folder.path)")
            for file in made {
                let text = try? String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8)
                #expect(text == file.text,
                        "\(ExerciseSource.folder(for: lesson))/\(file.name) is not what `swift run lab exercise reset \(lesson.id.number)` makes")
            }
            // The student's file is the lesson's article file, header aside.
            let article = try String(contentsOf: Self.packageRoot.appendingPathComponent(ExerciseSource.lessonFolder(for: lesson))
                .appendingPathComponent(ExerciseSource.studentFile), encoding: .utf8)
            let student = try String(contentsOf: Self.packageRoot.appendingPathComponent(ExerciseSource.path(for: lesson)), encoding: .utf8)
            #expect(ExerciseSource.withoutHeader(student) == ExerciseSource.withoutAnnotations(ExerciseSource.withoutHeader(article)),
                    "\(lesson.id.rawValue)")
            // The student's file is the code to read, not its answer key.
            for marker in ExerciseSource.annotationMarkers {
                #expect(!student.contains(marker), "\(ExerciseSource.path(for: lesson)) contains \(marker)")
            }
        }
    }

    @Test func untouchedExercisesFailExactlyThePredictedChecks() async throws {
        try await ExerciseTests.takingTurns {
            let finished = try Self.lab(["exercise", "check", "--all", "--json"])
            #expect(finished.status == 1, "\(finished.stderr)")
            let records = try Self.records(finished.stdout)
            for lesson in Catalogue.lessons {
                let mine = records.filter { $0.exercise == lesson.id.rawValue }
                #expect(mine.map(\.check) == lesson.checks.map(\.id))
                // What each check saw is the catalogue's prediction; none counts, the code being the starting code.
                #expect(Set(mine.filter { ![.fixed, .verifies, .holds].contains($0.status) }.map(\.check)) == lesson.failingAtStart,
                        "\(lesson.id.rawValue): \(mine)")
                #expect(mine.allSatisfy { !$0.passed }, "\(lesson.id.rawValue): untouched code passed a check")
                // Each defect shows itself the way the catalogue says the article's code does.
                for record in mine where lesson.defects.contains(where: { $0.id == record.check }) {
                    #expect(record.status == .stillThere && record.symptomSeen == true, "\(lesson.id.rawValue) \(record.check): \(record.detail)")
                }
                // Who and what: untouched code is not attempted, and every line says which code and which lab.
                let code = try FileDigest.sha256Hex(of: Self.packageRoot.appendingPathComponent(ExerciseSource.path(for: lesson)))
                for record in mine {
                    #expect(!record.attempted && record.codeSHA256 == code
                            && record.labVersion == LabVersion.current)
                    #expect(ISO8601DateFormatter().date(from: record.timestamp) != nil, "\(record.timestamp)")
                }
            }
            // Every "see it" command, pasted: four at a time, as they only read what was built.
            var pasted: [Result<ChildProcess.Finished, any Error>] = []
            WorkInOrder.run(records, width: 4, work: { record, _ in (Result { try Self.paste(record) }, false) },
                            each: { pasted.append($0) })
            for (record, shown) in zip(records, pasted) {
                try Self.expectPastedCommandShows(record, shown.get())
            }
        }
    }

    /// Exercise 03 solved except that it never resumes: every other check holds, the resume
    /// checks do not, and their lines count the bytes sent twice.
    @Test func anExerciseThatNeverResumesFailsTheResumeChecks() async throws {
        try await ExerciseTests.takingTurns {
            // The resume condition forced false: the request never carries Range.
            let records = try Self.checkCorrected(
                "03", replacing: "URLConnection(request: ResumeRules.request(for: run.url, onDisk: onDisk, known: knownVersion), delegate: self)",
                with: "URLConnection(request: false ? ResumeRules.request(for: run.url, onDisk: onDisk, known: knownVersion) : URLRequest(url: run.url), delegate: self)")
            // compressed-resume is a defect's check that only a resume passes, so it fails too.
            #expect(Set(records.filter { !$0.passed }.map(\.check)) == ["compressed-resume", "resumes-after-drop", "resumes-after-kill"], "\(records)")
            for record in records where !record.passed && record.check != "compressed-resume" {
                #expect(record.status == .fails)
                #expect(record.detail.contains("asked for no Range: 4,194,304 bytes came twice (at most 1 MiB may)"), "\(record.detail)")
            }
            let compressed = try #require(records.first { $0.check == "compressed-resume" })
            #expect(compressed.status == .stillThere)
            #expect(compressed.detail.hasPrefix("gzip+drop:40pct,gzip: the request after the break asked for no Range and got 200"), "\(compressed.detail)")
        }
    }

    /// Exercise 05 solved, except that it resumes from any blob on disk: the run at another URL
    /// follows the blob back to the first address, which now serves another file, and fails.
    @Test func resumeDataForAnotherURLIsSetAside() async throws {
        try await ExerciseTests.takingTurns {
            let records = try Self.checkCorrected("05", replacing: "guard url == run.url else {", with: "guard url == url else {")
            #expect(Set(records.filter { !$0.passed }.map(\.check)) == ["resume-data-for-another-url"], "\(records)")
            let record = try #require(records.first { $0.check == "resume-data-for-another-url" })
            // The blob goes back to the first URL, which now serves another file.
            #expect(record.detail.hasPrefix("stall:55pct,stall:512KiB, killed at the stall and run again at another URL (the first one still answering, "
                + "with its file changed): exit 65"), "\(record.detail)")
        }
    }

    /// A blob kept in TMPDIR, which every program of the user shares, is found by a new install.
    @Test func aNewInstallDoesNotResumeFromTheSharedTMPDIR() async throws {
        try await ExerciseTests.takingTurns {
            let records = try Self.checkCorrected("05", replacing: "resumeDataFile = run.file.appendingPathComponent(",
                                                  with: "resumeDataFile = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(")
            #expect(Set(records.filter { !$0.passed }.map(\.check)) == ["new-install-starts-over"], "\(records)")
            let record = try #require(records.first { $0.check == "new-install-starts-over" })
            #expect(record.detail.contains("the new install's first request asked for bytes="), "\(record.detail)")
        }
    }

    /// A full disk that ends in exit 69 is not the lesson's contract (74): the line says which it got.
    @Test func aStopWithTheWrongExitStatusFails() async throws {
        try await ExerciseTests.takingTurns {
            let records = try Self.checkCorrected(
                "02", replacing: "do { try partial.append(data, through: fileHandle) } catch { fail(error) }",
                with: "do { try partial.append(data, through: fileHandle) } catch { fail(DownloadError.httpStatus(0, url: \"disk\")) }")
            let record = try #require(records.first { $0.check == "write-errors-dropped" })
            #expect(!record.passed && record.status == .stillThere)
            #expect(record.detail.contains("the first run ended with exit 69, wanted exit 74 (io-failed)"), "\(record.detail)")
        }
    }

    @Test func correctedLogicInTheExercisePassesEveryCheck() async throws {
        try await ExerciseTests.takingTurns {
            for lesson in Catalogue.lessons {
                let finished = try Self.withExerciseFiles(lesson, holding: try Self.correctedFiles(lesson)) {
                    try Self.lab(["exercise", "check", lesson.id.number, "--json"])
                }
                #expect(finished.status == 0, "\(lesson.id.rawValue): \(finished.stderr)")
                let records = try Self.records(finished.stdout)
                #expect(records.map(\.check) == lesson.checks.map(\.id))
                // A defect's symptom is looked for and not seen; the skills and the clean run hold.
                let defects = Set(lesson.defects.map(\.id))
                for record in records {
                    #expect(record.passed && record.symptomSeen != true, "\(lesson.id.rawValue) \(record.check): \(record.detail)")
                    if defects.contains(record.check) { #expect(record.symptomSeen == false, "\(lesson.id.rawValue) \(record.check)") }
                }
            }
        }
    }

    @Test func halfFixedExerciseReportsExactlyTheRemainingDefects() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "02"))
            let starting = try Self.startingCode(lesson)
            let rangeFixed = starting.replacingOccurrences(of: "\"bytes:\\(localSize)-\"", with: "\"bytes=\\(localSize)-\"")
            #expect(rangeFixed != starting)
            let finished = try Self.withExercise(lesson, holding: rangeFixed) { try Self.lab(["exercise", "check", "02"]) }
            #expect(finished.status == 1)
            #expect(finished.stdout.contains("✔ range-colon"), "\(finished.stdout)")
            #expect(finished.stdout.contains("✗ no-206-check           still there"), "\(finished.stdout)")
            let failing = finished.stdout.split(separator: "\n").filter { $0.hasPrefix("✗ ") }
                .map { String($0.dropFirst(2).prefix { $0 != " " }) }
            // The defects left, and the skills one of them breaks (the validator, for a change across a kill).
            let left = Set(lesson.defects.map(\.id)).subtracting(["range-colon"])
            #expect(Set(failing) == left.union(lesson.skills.filter { !left.isDisjoint(with: $0.brokenBy) }.map(\.id)))
            // With the colon fixed, the 206 that starts 100 bytes early shows itself as what it is.
            #expect(finished.stdout.contains("100 bytes too long (4,194,404 for 4,194,304)"), "\(finished.stdout)")
            let counted = lesson.countedChecks.count
            #expect(finished.stdout.contains("8 of 12 checks fail; \(counted - 8) of the \(counted) checks the starting code fails now hold. "
                                             + "A hint: swift run lab exercise hint 02"), "\(finished.stdout)")
        }
    }

    /// progress.json is anyone's to edit: counts out of range are clamped, and a file that is not
    /// progress counts as none, instead of stopping `hint` with "Index out of range".
    @Test(arguments: [-1, Int.min, Int.max])
    func aTamperedHintCounterIsClamped(count: Int) async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "02"))
            let code = Self.packageRoot.appendingPathComponent(ExerciseSource.path(for: lesson))
            let progress = """
                {"exercises": {"02-filehandle": {"sourceSHA256": "\(try FileDigest.sha256Hex(of: code))", "failing": ["range-colon"],
                 "total": -5, "compiles": true, "hintsShown": {"range-colon": \(count)}}}}
                """
            try FileManager.default.createDirectory(at: Self.progressFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(progress.utf8).write(to: Self.progressFile)
            let finished = try Self.lab(["exercise", "hint", "02"])
            #expect(finished.status == 0, "\(finished.stderr)")
            let shown = count < 0 ? 1 : 3
            #expect(finished.stdout.contains("hint \(shown) of 3: "), "\(finished.stdout)")
            #expect(!finished.stdout.contains("Checking exercise"), "\(finished.stdout)")
        }
    }

    /// A completion handler written the natural way, a plain `var` set in the closure, fails
    /// Swift 6's data-race checking; the error points at the header, and the header's Mutex
    /// pattern, typed in the same place, compiles and downloads.
    @Test func aNaturalCompletionHandlerIsExplainedAndTheHeadersPatternCompiles() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "00"))
            let starting = try Self.startingCode(lesson)
            let call = "        fetchInOneCall(URLRequest(url: run.url), way, run) { data, _, _ in\n"
            #expect(starting.contains(call))
            let natural = """
                        var data: Data?
                        let done = DispatchSemaphore(value: 0)
                        URLSession.shared.dataTask(with: run.url) { body, _, _ in
                            data = body
                            done.signal()
                        }.resume()
                        done.wait()

                """
            // The article's call opens a closure: a `do` takes its place, and its closing brace.
            let refused = try Self.withExercise(lesson, holding: starting.replacingOccurrences(of: call, with: natural + "        do {\n")) {
                try Self.lab(["exercise", "check", "00"])
            }
            #expect(refused.status == 1)
            #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
            #expect(refused.stderr.hasSuffix("(Swift 6's data-race checking: the header of Article.swift shows the Mutex the lessons use for state a callback changes)\n"),
                    "\(refused.stderr)")

            let withMutex = """
                        let received = Mutex<Data?>(nil)
                        let done = DispatchSemaphore(value: 0)
                        URLSession.shared.dataTask(with: run.url) { body, _, _ in
                            received.withLock { $0 = body }
                            done.signal()
                        }.resume()
                        done.wait()
                        let data = received.withLock { $0 }

                """
            let code = "import Synchronization\n" + starting.replacingOccurrences(of: call, with: withMutex + "        do {\n")
            let checked = try Self.withExercise(lesson, holding: code) { try Self.lab(["exercise", "check", "00", "--json"]) }
            let clean = try #require(try Self.records(checked.stdout).first, "\(checked.stderr)")
            #expect(clean.check == "clean" && clean.passed, "\(clean.detail)")
        }
    }

    /// `see` draws the student's run above the corrected variant's under the same check: on the
    /// untouched exercise 03 under ignore-range, a 200 appended after the partial file above a 200
    /// written from byte 0.
    @Test func seeDrawsTheRunBesideTheCorrectedOne() async throws {
        try await Self.takingTurns {
            let seen = try Self.lab(["exercise", "see", "03", "no-206-check"])
            #expect(seen.status == 1, "\(seen.stderr)")
            let line = try #require(seen.stdout.split(separator: "\n").first { $0.hasPrefix("picture: ") }, "\(seen.stdout)")
            let path = String(line.dropFirst("picture: ".count).prefix { $0 != " " })
            defer { try? FileManager.default.removeItem(atPath: path) }
            let svg = try String(contentsOfFile: path, encoding: .utf8)
            let lanes = svg.components(separatedBy: "<g class=\"lane\"").dropFirst()
            #expect(lanes.count == 2)
            #expect(lanes.first?.contains("data-lane=\"your code: still-there") == true, "\(svg.prefix(2000))")
            #expect(lanes.first?.contains(">appended after 1.6 MiB<") == true)
            #expect(lanes.last?.contains("data-lane=\"corrected: fixed") == true && lanes.last?.contains(">written from byte 0<") == true)
        }
    }

    /// A run killed at the stall prints no record: its requests are drawn from the server's log,
    /// the kill and the rerun as events, and the rerun after them. Lesson 02's article appends a
    /// whole 200 to what the killed run left; the corrected variant asks for the rest.
    @Test func seeDrawsTheKilledRunThenTheRerun() async throws {
        try await Self.takingTurns {
            let seen = try Self.lab(["exercise", "see", "02", "resumes-after-kill", "--variant", "article"])
            let line = try #require(seen.stdout.split(separator: "\n").first { $0.hasPrefix("picture: ") }, "\(seen.stdout)\(seen.stderr)")
            let path = String(line.dropFirst("picture: ".count).prefix { $0 != " " })
            defer { try? FileManager.default.removeItem(atPath: path) }
            let lanes = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "<g class=\"lane\"").dropFirst()
            #expect(lanes.count == 2)
            for lane in lanes {
                let events = lane.components(separatedBy: "data-event=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
                #expect(events == ["killed (SIGKILL)", "run again"], "\(lane)")
                let bars = lane.components(separatedBy: "<g class=\"exchange\"").dropFirst()
                #expect(bars.count == 2 && bars.first?.contains(">✗ broke<") == true, "\(lane)")
            }
            let rerun = lanes.map { $0.components(separatedBy: "<g class=\"exchange\"").last ?? "" }
            #expect(rerun.first?.contains(">GET 200 · bytes:4194304- · 8 MiB<") == true && rerun.first?.contains(">appended after 4 MiB<") == true,
                    "\(rerun.first ?? "")")
            #expect(rerun.last?.contains(">GET 206 · bytes=4194304- · 4 MiB<") == true, "\(rerun.last ?? "")")
        }
    }

    @Test func hangingAndCrashingProgramsAreNamedAndStopped() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "00"))
            let starting = try Self.startingCode(lesson)
            let call = "fetchInOneCall(URLRequest(url: run.url), way, run) { data, _, _ in"
            #expect(starting.contains(call))

            let hangs = starting.replacingOccurrences(of: call, with: "while true { sleep(1) }\n        " + call)
            let started = Date()
            let hung = try Self.withExercise(lesson, holding: hangs) { try Self.lab(["exercise", "check", "00", "--timeout", "3"]) }
            #expect(hung.status == 1)
            #expect(hung.stdout.contains("✗ clean            timed out"), "\(hung.stdout)")
            #expect(hung.stdout.contains("timed out: still running after 3 s, stopped"), "\(hung.stdout)")
            #expect(hung.stdout.contains("· status-ignored   not run: the program timed out in an earlier check"), "\(hung.stdout)")
            #expect(Date().timeIntervalSince(started) < 120)

            let crashes = starting.replacingOccurrences(of: call, with: "let crash: [Int] = []\n        _ = crash[1]\n        " + call)
            let crashed = try Self.withExercise(lesson, holding: crashes) { try Self.lab(["exercise", "check", "00", "--json"]) }
            #expect(crashed.status == 1)
            let records = try Self.records(crashed.stdout)
            #expect(records.count == 5)
            for record in records {
                // A Swift trap: SIGILL (4) on x86_64, SIGTRAP (5) on arm64.
                #expect(record.status == .crashed && [4, 5].contains { record.detail.hasSuffix("crashed (signal \($0))") }, "\(record)")
            }
        }
    }

    @Test func hintsGoFromTheSymptomToTheFix() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "02"))
            let defect = lesson.defects[0]
            let note = "// a fresh edit: the checks have not seen this code\n"
            // Hints already shown are remembered; start from none.
            try? FileManager.default.removeItem(at: Self.progressFile)
            try Self.withExercise(lesson, holding: note + (try Self.startingCode(lesson))) {
                var shown: [String] = []
                for _ in 0..<4 {
                    let finished = try Self.lab(["exercise", "hint", "2"])
                    #expect(finished.status == 0, "\(finished.stderr)")
                    shown.append(finished.stdout)
                }
                #expect(shown[0].hasPrefix("Checking exercise 02 first:"), "\(shown[0])")
                for (index, hint) in defect.hints.enumerated() {
                    #expect(shown[index].contains("\(defect.id), hint \(index + 1) of \(defect.hints.count): \(hint)"), "\(shown[index])")
                    // The diagnosis comes with the last hint only.
                    #expect(shown[index].contains(defect.summary) == (index == defect.hints.count - 1), "\(shown[index])")
                }
                #expect(shown[3].contains("hint 3 of 3"))
                #expect(!shown[1].contains("Checking"))
            }
        }
    }

    @Test func watchChecksAgainWhenTheFileIsSaved() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "02"))
            let starting = try Self.startingCode(lesson)
            try Self.withExercise(lesson, holding: starting) {
                let child = try ChildProcess("lab", Self.buildingWithoutTheLock(["exercise", "watch", "02"]))
                child.process.currentDirectoryURL = Self.packageRoot
                try child.start()
                defer { child.kill() }
                func waitFor(_ text: String, count: Int) -> Bool {
                    let deadline = Date().addingTimeInterval(180)
                    while Date() < deadline {
                        if child.stdoutSoFar.components(separatedBy: text).count - 1 >= count { return true }
                        usleep(200_000)
                    }
                    return false
                }
                #expect(waitFor("── watching Article.swift", count: 1), "\(child.stdoutSoFar)")
                #expect(child.stdoutSoFar.contains("✗ range-colon"))
                let fixed = starting.replacingOccurrences(of: "\"bytes:\\(localSize)-\"", with: "\"bytes=\\(localSize)-\"")
                try fixed.write(to: Self.packageRoot.appendingPathComponent(ExerciseSource.path(for: lesson)), atomically: true, encoding: .utf8)
                #expect(waitFor("── watching Article.swift", count: 2), "\(child.stdoutSoFar)")
                #expect(child.stdoutSoFar.contains("✔ range-colon            fixed"), "\(child.stdoutSoFar)")
            }
        }
    }

    @Test func resetPutsBackTheStartingCodeAndKeepsTheEditedOne() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "04"))
            let edited = "// my attempt\n" + (try Self.startingCode(lesson))
            try Self.withExercise(lesson, holding: edited) {
                let finished = try Self.lab(["exercise", "reset", "4"])
                #expect(finished.status == 0, "\(finished.stderr)")
                let file = Self.packageRoot.appendingPathComponent(ExerciseSource.path(for: lesson))
                #expect(try String(contentsOf: file, encoding: .utf8) == (try Self.startingCode(lesson)))
                let kept = try #require(finished.stdout.firstMatch(of: /kept at (\S+\.swift)/)?.output.1)
                let backup = Self.packageRoot.appendingPathComponent(String(kept))
                #expect(try String(contentsOf: backup, encoding: .utf8) == edited)
                try? FileManager.default.removeItem(at: backup)
            }
        }
    }

    @Test func listShowsEachExerciseAndTheNextOne() async throws {
        try await ExerciseTests.takingTurns {
            let finished = try Self.lab(["exercise"])
            #expect(finished.status == 0, "\(finished.stderr)")
            for lesson in Catalogue.lessons {
                #expect(finished.stdout.contains("  \(lesson.id.number)  \(lesson.id.rawValue.dropFirst(3))"))
            }
            #expect(finished.stdout.contains("swift run lab exercise check "))
        }
    }

    @Test func outsideThePackageIsOneLineAndExit64() async throws {
        try await OffThePool.run {
            let child = try ChildProcess("lab", ["exercise", "check", "02"])
            child.process.currentDirectoryURL = URL(fileURLWithPath: "/")
            try child.start()
            let finished = child.wait(timeout: 60)
            #expect(finished.status == 64)
            #expect(finished.stderr == "lab exercise check: no Sources/Exercises here or above: run `swift run lab exercise` in the Download Lab folder\n")
        }
    }

    @Test(arguments: [["exercise", "check", "99"], ["exercise", "hint", "lesson-42"], ["exercise", "reset", "x"],
                      ["exercise", "watch", "42"], ["exercise", "check"], ["exercise", "check", "02", "--timeout", "0"],
                      ["exercise", "see", "02", "bogus"], ["exercise", "see", "02"], ["exercise", "hint", "02", "bogus"]])
    func badInputIsOneLineAndExit64(arguments: [String]) async throws {
        try await ExerciseTests.takingTurns {
            let finished = try Self.lab(arguments, timeout: 60)
            #expect(finished.status == 64)
            #expect(finished.stdout.isEmpty)
            #expect(finished.stderr.split(separator: "\n").count == 1, "\(finished.stderr)")
            #expect(finished.stderr.hasPrefix("lab exercise"), "\(finished.stderr)")
        }
    }
}

