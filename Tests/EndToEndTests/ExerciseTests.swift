import Foundation
import LabCatalogue
import LabKit
import LabVocabulary
import Synchronization
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
    private let progressBefore = try? Data(contentsOf: ExerciseTests.progressFile)

    deinit {
        if let progressBefore {
            try? progressBefore.write(to: Self.progressFile)
        } else {
            try? FileManager.default.removeItem(at: Self.progressFile)
        }
    }

    struct Record: Decodable {
        let exercise: String
        let check: String
        let status: CheckStatus
        let passed: Bool
        let detail: String
        let command: String
        let symptomSeen: Bool?
        let attempted: Bool
        let codeSHA256: String
        let hintsShown: Int
        let timestamp: String
        let labVersion: String
    }

    /// `lab` with `arguments`, run in the package folder. The commands that build get
    /// `--ignore-lock`: the `swift test` running this suite holds the package's lock.
    /// Once one run has hung, the others are not started: each would hang as long, and a stuck
    /// build would hold the whole suite for hours.
    static func lab(_ arguments: [String], timeout: TimeInterval = 600) throws -> ChildProcess.Finished {
        try exclusively { try runLab(arguments, timeout: timeout) }
    }

    /// A test that writes code into the exercise folders, builds it or runs what was built: on a
    /// thread of its own, waiting its turn without holding one of Swift Testing's, then alone
    /// with the folders and their builds from its first step to its last.
    static func takingTurns<T>(_ body: () throws -> T) async throws -> T {
        try await OffThePool.runWaitingForALock { try exclusively(body) }
    }

    /// The exercise folders are the package's own, shared by every suite that writes code into
    /// them (this one, the catalogue's, lesson 09's, the class's): one test at a time uses them,
    /// whatever its suite. Recursive, as `withExerciseFiles` runs `lab` inside.
    static func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        exerciseFolders.lock()
        defer { exerciseFolders.unlock() }
        return try body()
    }
    private static let exerciseFolders = NSRecursiveLock()

    private static func runLab(_ arguments: [String], timeout: TimeInterval) throws -> ChildProcess.Finished {
        if aRunHung.withLock({ $0 }) {
            throw LabHung(description: "not run: an earlier `lab exercise` outlived its time limit")
        }
        let child = try ChildProcess("lab", buildingWithoutTheLock(arguments))
        child.process.currentDirectoryURL = packageRoot
        try child.start()
        let finished = child.wait(timeout: timeout)
        if finished.timedOut {
            aRunHung.withLock { $0 = true }
            throw LabHung(description: "`lab \(arguments.joined(separator: " "))` was still running after \(Int(timeout)) s; "
                          + "stdout ended: \(finished.stdout.suffix(300)); stderr ended: \(finished.stderr.suffix(300))")
        }
        return finished
    }

    private static let aRunHung = Mutex(false)

    struct LabHung: Error, CustomStringConvertible {
        let description: String
    }

    /// Builds the exercise's executable from its files as they are, without checking it.
    static func build(_ lesson: LessonDefects) throws {
        let finished = try exclusively {
            let child = try ChildProcess(program: URL(fileURLWithPath: "/usr/bin/env"),
                                         ["swift", "build", "--product", lesson.exerciseExecutable, "--ignore-lock"])
            child.process.currentDirectoryURL = packageRoot
            try child.start()
            return child.wait(timeout: 600)
        }
        try #require(finished.status == 0, "\(finished.stdout.suffix(2000))")
    }

    static func buildingWithoutTheLock(_ arguments: [String]) -> [String] {
        arguments.count > 1 && ["check", "hint", "see", "watch"].contains(arguments[1]) ? arguments + ["--ignore-lock"] : arguments
    }

    static func records(_ output: String) throws -> [Record] {
        try output.split(separator: "\n").map { try JSONDecoder().decode(Record.self, from: Data($0.utf8)) }
    }


    /// Runs `body` with the exercise's file holding `code`, then puts the file back as it was.
    static func withExercise<T>(_ lesson: LessonDefects, holding code: String, _ body: () throws -> T) throws -> T {
        try withExerciseFiles(lesson, holding: [ExerciseSource.studentFile: code], body)
    }

    /// Runs `body` with the exercise's files named in `files` replaced, and puts them back.
    static func withExerciseFiles<T>(_ lesson: LessonDefects, holding files: [String: String], _ body: () throws -> T) throws -> T {
        try exclusively { try withFilesReplaced(lesson, holding: files, body) }
    }

    private static func withFilesReplaced<T>(_ lesson: LessonDefects, holding files: [String: String], _ body: () throws -> T) throws -> T {
        let folder = packageRoot.appendingPathComponent(ExerciseSource.folder(for: lesson))
        var originals: [URL: Data] = [:]
        defer { for (file, data) in originals { try? data.write(to: file) } }
        for (name, code) in files {
            let file = folder.appendingPathComponent(name)
            originals[file] = try Data(contentsOf: file)
            try code.write(to: file, atomically: true, encoding: .utf8)
        }
        return try body()
    }

    /// The exercise's files as `lab exercise reset` makes them from the lesson's folder. With
    /// `swappingVariants`, made as if the lesson's corrected variant were its article: the
    /// corrected file with its types named as the article's, and the wiring's corrected line.
    static func startingFiles(_ lesson: LessonDefects, swappingVariants: Bool = false) throws -> [ExerciseSource.File] {
        let folder = packageRoot.appendingPathComponent(ExerciseSource.lessonFolder(for: lesson))
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") {
            files[name] = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
        }
        if swappingVariants {
            let asArticle = { (text: String) in text.replacing(/\bCorrected(?=[A-Z])/, with: "Article") }
            files[ExerciseSource.studentFile] = asArticle(try #require(files["Corrected.swift"]))
            var wiring = try #require(files["main.swift"]).components(separatedBy: "\n")
            let corrected = try #require(wiring.first { $0.contains("case .corrected:") })
            wiring = wiring.filter { !$0.contains("case .article:") }
                .map { $0 == corrected ? asArticle(corrected.replacingOccurrences(of: "case .corrected:", with: "case .article:")) : $0 }
            files["main.swift"] = wiring.joined(separator: "\n")
        }
        return try ExerciseSource.files(for: lesson, lessonFiles: files)
    }

    /// The student's file as it starts.
    static func startingCode(_ lesson: LessonDefects) throws -> String {
        try #require(try startingFiles(lesson).first { $0.name == ExerciseSource.studentFile }).text
    }

    @Test func startingCodeIsMadeFromTheArticleVariant() async throws {
        try await OffThePool.run {
            try Self.exclusively { try startingCodeOfEveryExerciseIsMadeFromItsArticle() }
        }
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
                        "\(ExerciseSource.folder(for: lesson))/\(file.name) is not what `swift run lab exercise reset \(lesson.number)` makes")
            }
            // The student's file is the lesson's article file, header aside.
            let article = try String(contentsOf: Self.packageRoot.appendingPathComponent(ExerciseSource.lessonFolder(for: lesson))
                .appendingPathComponent(ExerciseSource.studentFile), encoding: .utf8)
            let student = try String(contentsOf: Self.packageRoot.appendingPathComponent(ExerciseSource.path(for: lesson)), encoding: .utf8)
            #expect(ExerciseSource.withoutHeader(student) == ExerciseSource.withoutAnnotations(ExerciseSource.withoutHeader(article)),
                    "\(lesson.lesson)")
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
                let mine = records.filter { $0.exercise == lesson.lesson }
                #expect(mine.map(\.check) == lesson.checks.map(\.id))
                #expect(Set(mine.filter { !$0.passed }.map(\.check)) == lesson.failingAtStart, "\(lesson.lesson): \(mine)")
                // Each defect shows itself the way the catalogue says the article's code does.
                for record in mine where lesson.defects.contains(where: { $0.id == record.check }) {
                    #expect(record.status == .stillThere && record.symptomSeen == true, "\(lesson.lesson) \(record.check): \(record.detail)")
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
            let pasted = Self.onThreads(records, width: 4) { record in Result { try Self.paste(record) } }
            for (record, shown) in zip(records, pasted) {
                try Self.expectPastedCommandShows(record, shown.get())
            }
        }
    }

    /// Runs the check's "see it" command as a student pastes it (`swift run X` is the built X: the
    /// running `swift test` holds the package's lock). The caller holds the exercise folders.
    static func paste(_ record: Record) throws -> ChildProcess.Finished {
        let see = "swift run lab exercise see "
        if record.command.hasPrefix(see) {
            return try runLab(["exercise", "see"] + record.command.dropFirst(see.count).split(separator: " ").map(String.init), timeout: 600)
        }
        let pasted = ChildProcess.buildDirectory.path + "/" + record.command.dropFirst("swift run ".count)
        let child = try ChildProcess(program: URL(fileURLWithPath: "/bin/sh"), ["-c", pasted])
        try child.start()
        return child.wait(timeout: 120)
    }

    /// The pasted command shows what the check saw: the same exit status for a one-run command,
    /// the same verdict from `lab exercise see`.
    static func expectPastedCommandShows(_ record: Record, _ shown: ChildProcess.Finished) throws {
        if record.command.hasPrefix("swift run lab exercise see ") {
            #expect(shown.status == (record.passed ? 0 : 1), "\(record.command): \(shown.stdout.suffix(400)) \(shown.stderr.suffix(400))")
            #expect(shown.stdout.contains((record.passed ? "✔ " : "✗ ") + record.check), "\(record.command): \(shown.stdout.suffix(400))")
            return
        }
        let wanted = try #require(record.detail.firstMatch(of: /exit (\d+)/).map { Int32($0.output.1)! }, "\(record.detail)")
        #expect(record.command.hasPrefix("swift run "), "\(record.command)")
        #expect(shown.status == wanted, "\(record.exercise) \(record.check): `\(record.command)` exited \(shown.status), the check saw \(wanted)")
    }

    /// `work` on each item, `width` at a time on threads of their own; the results in order.
    static func onThreads<Item: Sendable, Output: Sendable>(_ items: [Item], width: Int,
                                                            _ work: @escaping @Sendable (Item) -> Output) -> [Output] {
        let board = ParallelBoard<Output>(count: items.count)
        let group = DispatchGroup()
        for _ in 0..<min(width, items.count) {
            group.enter()
            Thread {
                while let index = board.claim() { board.store(work(items[index]), at: index) }
                group.leave()
            }.start()
        }
        group.wait()
        return board.outputs
    }

    /// The exercise's files holding the lesson's corrected logic (`startingFiles(swappingVariants:)`),
    /// less the shared file, which the exercise already has.
    static func correctedFiles(_ lesson: LessonDefects) throws -> [String: String] {
        let files = try startingFiles(lesson, swappingVariants: true).filter { $0.name != "Shared.swift" }
        return Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.text) })
    }

    /// `check --json` of an exercise holding the corrected logic with one piece of it replaced:
    /// a student's solution that is right but for that piece.
    static func checkCorrected(_ number: String, replacing piece: String, with replacement: String) throws -> [Record] {
        let lesson = try #require(Catalogue.lesson(named: number))
        var files = try correctedFiles(lesson)
        let student = try #require(files[ExerciseSource.studentFile])
        try #require(student.contains(piece), "\(piece)")
        files[ExerciseSource.studentFile] = student.replacingOccurrences(of: piece, with: replacement)
        let finished = try withExerciseFiles(lesson, holding: files) { try lab(["exercise", "check", number, "--json"]) }
        return try records(finished.stdout)
    }

    /// Exercise 03 solved except that it never resumes: every other check holds, the resume
    /// checks do not, and their lines count the bytes sent twice.
    @Test func anExerciseThatNeverResumesFailsTheResumeChecks() async throws {
        try await ExerciseTests.takingTurns {
            // The resume condition forced false: the request never carries Range.
            let records = try Self.checkCorrected(
                "03", replacing: "URLConnection(request: partial.nextRequest(), delegate: self)",
                with: "URLConnection(request: false ? partial.nextRequest() : URLRequest(url: run.url), delegate: self)")
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
    /// follows the blob to a server that is gone, and fails.
    @Test func resumeDataForAnotherURLIsSetAside() async throws {
        try await ExerciseTests.takingTurns {
            let records = try Self.checkCorrected("05", replacing: "guard url == run.url else {", with: "guard url == url else {")
            #expect(Set(records.filter { !$0.passed }.map(\.check)) == ["resume-data-for-another-url"], "\(records)")
            let record = try #require(records.first { $0.check == "resume-data-for-another-url" })
            #expect(record.detail.hasPrefix("ok,stall:512KiB, killed at the stall and run again at another URL: exit 69 (transfer-failed)"), "\(record.detail)")
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
                    try Self.lab(["exercise", "check", lesson.number, "--json"])
                }
                #expect(finished.status == 0, "\(lesson.lesson): \(finished.stderr)")
                let records = try Self.records(finished.stdout)
                #expect(records.map(\.check) == lesson.checks.map(\.id))
                // A defect's symptom is looked for and not seen; the skills and the clean run hold.
                let defects = Set(lesson.defects.map(\.id))
                for record in records {
                    #expect(record.passed && record.symptomSeen != true, "\(lesson.lesson) \(record.check): \(record.detail)")
                    if defects.contains(record.check) { #expect(record.symptomSeen == false, "\(lesson.lesson) \(record.check)") }
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
            #expect(Set(failing) == Set(lesson.defects.map(\.id)).subtracting(["range-colon"]))
            // With the colon fixed, the 206 that starts 100 bytes early shows itself as what it is.
            #expect(finished.stdout.contains("100 bytes too long (4,194,404 for 4,194,304)"), "\(finished.stdout)")
            #expect(finished.stdout.contains("7 of 11 checks fail. A hint: swift run lab exercise hint 02"), "\(finished.stdout)")
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

    /// `lab` built somewhere else, as Xcode builds it into DerivedData, with `lab-measure` beside
    /// it as a build of `lab` puts it: the check runs the exercise `swift build` just built in the
    /// package, not a program beside `lab`, which is not there.
    @Test func aLabBuiltElsewhereRunsWhatItJustBuilt() async throws {
        try await ExerciseTests.takingTurns {
            let elsewhere = try scratchDirectory()
            defer { try? FileManager.default.removeItem(at: elsewhere) }
            for name in ["lab", "lab-measure"] {
                try FileManager.default.copyItem(at: ChildProcess.buildDirectory.appendingPathComponent(name),
                                                 to: elsewhere.appendingPathComponent(name))
            }
            let lesson = try #require(Catalogue.lesson(named: "07"))
            let child = try ChildProcess(program: elsewhere.appendingPathComponent("lab"), ["exercise", "check", "07", "--json", "--ignore-lock"])
            child.process.currentDirectoryURL = Self.packageRoot
            try child.start()
            let finished = child.wait(timeout: 600)
            let records = try Self.records(finished.stdout)
            #expect(records.map(\.check) == lesson.checks.map(\.id), "\(finished.stderr)")
            #expect(Set(records.filter { !$0.passed }.map(\.check)) == lesson.failingAtStart, "\(records.map(\.detail))")
            // Each check ran the program, and the defects showed.
            #expect(records.allSatisfy { $0.status != .notRun }, "\(records.map(\.detail))")
            #expect(records.filter { $0.symptomSeen == true }.map(\.check) == lesson.defects.map(\.id), "\(records.map(\.detail))")
        }
    }

    @Test func codeThatDoesNotCompileGivesTheFirstErrorOnly() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "03"))
            var lines = try Self.startingCode(lesson).components(separatedBy: "\n")
            let line = try #require(lines.firstIndex { $0.contains("func downloadFile()") }) + 2
            lines.insert("        let broken: Int = \"not a number\"", at: line - 1)
            let finished = try Self.withExercise(lesson, holding: lines.joined(separator: "\n")) { try Self.lab(["exercise", "check", "03"]) }
            #expect(finished.status == 1)
            #expect(finished.stdout.isEmpty, "\(finished.stdout)")
            let errorLines = finished.stderr.split(separator: "\n")
            #expect(errorLines.count == 1, "\(finished.stderr)")
            #expect(finished.stderr.hasPrefix("lab exercise check: Sources/Exercises/03-outputstream/Article.swift:\(line):"), "\(finished.stderr)")
            #expect(finished.stderr.contains("error: cannot convert value of type 'String'"), "\(finished.stderr)")
        }
    }

    /// A completion handler written the natural way, a plain `var` set in the closure, fails
    /// Swift 6's data-race checking; the error points at the header, and the header's Mutex
    /// pattern, typed in the same place, compiles and downloads.
    @Test func aNaturalCompletionHandlerIsExplainedAndTheHeadersPatternCompiles() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "00"))
            let starting = try Self.startingCode(lesson)
            let call = "        let (data, _, _) = fetchInOneCall(URLRequest(url: run.url), way, run)\n"
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
            let refused = try Self.withExercise(lesson, holding: starting.replacingOccurrences(of: call, with: natural)) {
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
            let code = "import Synchronization\n" + starting.replacingOccurrences(of: call, with: withMutex)
            let checked = try Self.withExercise(lesson, holding: code) { try Self.lab(["exercise", "check", "00", "--json"]) }
            let clean = try #require(try Self.records(checked.stdout).first, "\(checked.stderr)")
            #expect(clean.check == "clean" && clean.passed, "\(clean.detail)")
        }
    }

    @Test func hangingAndCrashingProgramsAreNamedAndStopped() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: "00"))
            let starting = try Self.startingCode(lesson)
            let call = "let (data, _, _) = fetchInOneCall(URLRequest(url: run.url), way, run)"
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
                #expect(finished.stdout.contains("  \(lesson.number)  \(lesson.lesson.dropFirst(3))"))
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
                      ["exercise", "watch", "10"], ["exercise", "check"], ["exercise", "check", "02", "--timeout", "0"],
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

/// The items `ExerciseTests.onThreads` hands out, and what came of each.
private final class ParallelBoard<Output: Sendable>: Sendable {
    private let state: Mutex<(next: Int, outputs: [Output?])>

    init(count: Int) { state = Mutex((0, Array(repeating: nil, count: count))) }

    func claim() -> Int? {
        state.withLock { state in
            guard state.next < state.outputs.count else { return nil }
            defer { state.next += 1 }
            return state.next
        }
    }

    func store(_ output: Output, at index: Int) { state.withLock { $0.outputs[index] = output } }

    var outputs: [Output] { state.withLock { $0.outputs.map { $0! } } }
}
