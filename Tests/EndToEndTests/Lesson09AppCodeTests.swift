import Foundation
import LabCatalogue
import LabFixtures
import LabKit
import LabServer
import LabVocabulary
import Synchronization
import TestFolders
import TestServers
import TestThreads
import Testing

/// Lesson 09's corrected code with a piece changed, built as the exercise and run: a rule of
/// Apple's broken, a Pause, an upload. These tests take turns on the exercise's folder.
struct Lesson09AppCodeTests {
    /// Apple's background session raises an exception for a completion handler and for a missing
    /// identifier; the lab's ends the run with one line and exit 70.
    @Test(arguments: [
        ("self.session.downloadTask(with: self.run.url).resume()",
         "self.session.downloadTask(with: self.run.url) { _, _, _ in }.resume()",
         "completion handler blocks are not supported in background sessions: use a delegate instead"),
        ("URLSessionConfiguration.background(withIdentifier: App.sessionIdentifier)",
         "URLSessionConfiguration.background(withIdentifier: \"\")",
         "a background session needs an identifier: background(withIdentifier:) was given \"\""),
        ("self.session.downloadTask(with: self.run.url).resume()",
         "self.session.uploadTask(with: URLRequest(url: self.run.url), from: Data(\"photo\".utf8)).resume()",
         "uploadTask(with:from:): a background session uploads from a file only: use uploadTask(with:fromFile:)"),
    ])
    func misusedBackgroundSessionsAreOneLineAndExit70(piece: String, replacement: String, says: String) async throws {
        try await ExerciseTests.takingTurns {
            let lesson = Catalogue.lesson(.backgroundSession)
            var files = try ExerciseTests.correctedFiles(lesson)
            let student = try #require(files[ExerciseSource.studentFile])
            try #require(student.contains(piece))
            files[ExerciseSource.studentFile] = student.replacingOccurrences(of: piece, with: replacement)
            try ExerciseTests.withExerciseFiles(lesson, holding: files) {
                let checked = try ExerciseTests.lab(["exercise", "check", "09", "--json"])
                let record = try #require(try ExerciseTests.records(checked.stdout).first)
                #expect(!record.passed && record.detail.contains("exit 70 (misuse)"), "\(record.detail)")
                let finished = try ChildProcess.run(LessonID.backgroundSession.exerciseExecutable, ["--size", "1MiB"], timeout: 60)
                #expect(finished.status == ExitStatus.misuse.rawValue)
                let lines = finished.stderr.split(separator: "\n")
                #expect(lines.count == 1 && lines.first == "\(LessonID.backgroundSession.exerciseExecutable): \(says)"[...], "\(finished.stderr)")
            }
        }
    }

    /// `cancel(byProducingResumeData:)` on a background task, a Pause in otherwise corrected
    /// code: the service stops and keeps the partial file, `didCompleteWithError` carries the
    /// resume data and the handler gets the same blob after it, and the task the app makes from
    /// it goes on with a 206 from where the file ends. The file is exact.
    @Test func aPauseHandsBackResumeDataThatContinuesTheFile() async throws {
        try await ExerciseTests.takingTurns {
            let pause = """
                let task = self.session.downloadTask(with: self.run.url)
                            task.resume()
                            DispatchQueue.main.asyncAfter(deadline: .now() + 0.4) {
                                task.cancel(byProducingResumeData: { data in self.run.log("paused: \\(data?.count ?? 0) bytes of resume data") })
                            }
                """
            try withLabServer { server in
                let size: Int64 = 8 << 20
                let ran = try Self.runCorrected(replacing: [(Self.startPiece, pause)], ["--life", ""], size: size, faults: "throttle:4MiB", server: server)
                #expect(ran.finished.status == 0, "\(ran.finished.stderr)")
                #expect(try #require(ran.record).verified)
                let story = ran.finished.stderr
                #expect(story.contains("service: task 1 cancelled for resume data: its "), "\(story)")
                #expect(story.contains("the download failed (cancelled): resuming from its resume data"), "\(story)")
                #expect(story.contains("paused: ") && !story.contains("paused: 0 bytes of resume data"), "\(story)")
                // The handler comes after didCompleteWithError, which resumed already.
                let resumedAt = try #require(story.range(of: "resuming from its resume data"))
                let pausedAt = try #require(story.range(of: "paused: "))
                #expect(resumedAt.lowerBound < pausedAt.lowerBound)
                #expect(ran.gets.count == 2, "\(ran.gets.map(\.range))")
                let resumedFrom = try #require(ran.gets.last?.range.flatMap(RangeHeader.start(of:)))
                #expect(resumedFrom > 0 && resumedFrom < size && ran.gets.last?.status == 206, "\(ran.gets.map(\.range))")
                #expect(ran.bytesSentTwice <= 1 << 20, "the server sent \(ran.bytesSentTwice) bytes twice")
            }
        }
    }

    /// `finishTasksAndInvalidate()` right after Start: the download goes on, the file is handed
    /// over, and only then does the delegate hear that the session is invalid.
    @Test func anInvalidatedSessionFinishesItsTaskThenSaysSo() async throws {
        try await ExerciseTests.takingTurns {
            let start = """
                self.session.downloadTask(with: self.run.url).resume()
                            self.session.finishTasksAndInvalidate()
                """
            let told = ("    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {\n", """
                    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
                        run.log("the session is invalid now")
                    }

                    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {

                """)
            try withLabServer { server in
                let ran = try Self.runCorrected(replacing: [(Self.startPiece, start), told], ["--life", ""], size: 2 << 20, server: server)
                #expect(ran.finished.status == 0, "\(ran.finished.stderr)")
                #expect(try #require(ran.record).verified)
                let story = ran.finished.stderr
                let moved = try #require(story.range(of: "moved the file to "), "\(story)")
                let invalid = try #require(story.range(of: "the session is invalid now"), "\(story)")
                #expect(moved.lowerBound < invalid.lowerBound)
            }
        }
    }

    /// Lesson 09's tasks are the lab's: `cancel(byProducingResumeData:)` takes a `@Sendable`
    /// handler here as in Apple's header, so a handler that would not build on a Mac does not
    /// build here either.
    @Test func aResumeDataHandlerIsAsStrictAsApples() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = Catalogue.lesson(.backgroundSession)
            var files = try ExerciseTests.correctedFiles(lesson)
            let student = try #require(files[ExerciseSource.studentFile])
            try #require(student.contains(Self.startPiece))
            files[ExerciseSource.studentFile] = student.replacingOccurrences(of: Self.startPiece, with: """
                final class Tally { var bytes = 0 }
                            let tally = Tally()
                            let task = self.session.downloadTask(with: self.run.url)
                            task.resume()
                            task.cancel(byProducingResumeData: { data in tally.bytes = data?.count ?? 0 })
                """)
            try ExerciseTests.withExerciseFiles(lesson, holding: files) {
                let checked = try ExerciseTests.lab(["exercise", "check", "09", "--json"])
                let record = try #require(try ExerciseTests.records(checked.stdout).first)
                #expect(record.status == .doesNotCompile, "\(record.detail)")
                #expect(record.detail.contains("Article.swift:") && record.detail.contains("Sendable"), "\(record.detail)")
            }
        }
    }

    /// A task asked of an invalidated session: Apple's raises, the lab's app ends with one line.
    @Test func anInvalidatedSessionMakesNoMoreTasks() async throws {
        try await ExerciseTests.takingTurns {
            let start = """
                self.session.finishTasksAndInvalidate()
                            self.session.downloadTask(with: self.run.url).resume()
                """
            try withLabServer { server in
                let ran = try Self.runCorrected(replacing: [(Self.startPiece, start)], ["--life", ""], size: 1 << 20, server: server)
                #expect(ran.finished.status == ExitStatus.misuse.rawValue, "\(ran.finished.stderr)")
                #expect(ran.finished.stderr.hasSuffix("\(LessonID.backgroundSession.exerciseExecutable): downloadTask(with:): this session has "
                                                      + "been invalidated, and makes no more tasks: make a new session\n"), "\(ran.finished.stderr)")
                #expect(ran.gets.isEmpty)
            }
        }
    }

    /// Corrected code that, on Start, uploads a body file of `mebibytes` MiB of 7s as one
    /// multipart part, logs the progress's end, the server's answer and the upload's end, then
    /// downloads as usual; run as the exercise's executable with `arguments`. `meanwhile` gets
    /// the output's path while the run goes on.
    static func runUploadingApp(mebibytes: Int, arguments: [String], server: LabServer,
                                meanwhile: (URL) throws -> Void = { _ in }) throws -> Lesson09Tests.Ran {
        // The app's file to upload, made before the app runs (a GiB takes longer than the app
        // waits for its task), and removed once the run is over.
        let body = try scratchDirectory().appendingPathComponent("upload.body")
        defer { try? FileManager.default.removeItem(at: body.deletingLastPathComponent()) }
        _ = FileManager.default.createFile(atPath: body.path, contents: nil)
        let out = try FileHandle(forWritingTo: body)
        out.write(Data("--lab-boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"photo.bin\"\r\n\r\n".utf8))
        for _ in 0..<mebibytes { out.write(Data(repeating: 7, count: 1 << 20)) }
        out.write(Data("\r\n--lab-boundary--\r\n".utf8))
        try out.close()
        let pieces = [
            ("URLSessionDownloadDelegate, @unchecked Sendable {", "URLSessionDownloadDelegate, URLSessionDataDelegate, @unchecked Sendable {"),
            (startPiece, """
                let body = URL(fileURLWithPath: "\(body.path)")
                var request = URLRequest(url: URL(string: "/upload", relativeTo: self.run.url)!.absoluteURL)
                request.httpMethod = "POST"
                request.setValue("multipart/form-data; boundary=lab-boundary", forHTTPHeaderField: "Content-Type")
                self.session.uploadTask(with: request, fromFile: body).resume()
                """),
            ("    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {\n", """
                    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
                        run.log("the server answered: " + String(decoding: data, as: UTF8.self))
                    }

                    func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                                    totalBytesExpectedToSend: Int64) {
                        if totalBytesSent == totalBytesExpectedToSend { run.log("sent all \\(totalBytesSent) bytes") }
                    }

                    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
                        if task is URLSessionUploadTask, error == nil {
                            run.log("the upload is done (\\((task.response as? HTTPURLResponse)?.statusCode ?? 0)): now the download")
                            return session.downloadTask(with: run.url).resume()
                        }

                """),
        ]
        return try runCorrected(replacing: pieces, arguments, size: 4 << 20, server: server, meanwhile: meanwhile)
    }

    /// Where the corrected app starts its download, on Start.
    static let startPiece = "self.session.downloadTask(with: self.run.url).resume()"

    /// The lesson's corrected code with each of `pieces` replaced, built as the exercise's
    /// executable and run with `arguments` on a file of `size`; `meanwhile` gets the output's
    /// path while the run goes on.
    static func runCorrected(replacing pieces: [(String, String)], _ arguments: [String], size: Int64, faults: String? = nil,
                             server: LabServer, meanwhile: (URL) throws -> Void = { _ in }) throws -> Lesson09Tests.Ran {
        let lesson = Catalogue.lesson(.backgroundSession)
        var files = try ExerciseTests.correctedFiles(lesson)
        var student = try #require(files[ExerciseSource.studentFile])
        for (piece, replacement) in pieces {
            try #require(student.contains(piece), "\(piece)")
            student = student.replacingOccurrences(of: piece, with: replacement)
        }
        files[ExerciseSource.studentFile] = student
        return try ExerciseTests.withExerciseFiles(lesson, holding: files) {
            try ExerciseTests.build(lesson)
            let fixture = Fixture(name: "lesson-09.bin", size: size)
            let token = "l09-\(UUID().uuidString.prefix(8))"
            let output = try scratchDirectory().appendingPathComponent("lesson-09.bin")
            let process = try ChildProcess(LessonID.backgroundSession.exerciseExecutable, [
                "--url", server.url(for: fixture, faults: faults, run: token).absoluteString, "--sha256", fixture.sha256Hex(),
                "--output", output.path, "--json",
            ] + arguments)
            try process.start()
            try meanwhile(output)
            let finished = process.wait(timeout: 120)
            return Lesson09Tests.Ran(finished: finished, record: try? finished.result(), gets: server.gets(run: token), size: size, output: output)
        }
    }

    /// The digest of `mebibytes` MiB of 7s: the part the uploading app sends.
    static func partDigest(mebibytes: Int) throws -> String {
        let part = try scratchDirectory().appendingPathComponent("part.bin")
        try Data(repeating: 7, count: mebibytes << 20).write(to: part)
        return try FileDigest.sha256Hex(of: part)
    }

    /// An upload task from a file: the service sends it while the app is suspended at 20% and
    /// ended at 50% of it, the relaunched app hears the server's answer and the upload's end,
    /// then downloads as usual. The server received the file's exact bytes, once.
    @Test func anUploadFromAFileGoesOnWhileTheAppIsAway() async throws {
        try await ExerciseTests.takingTurns {
            try withLabServer { server in
                let ran = try Self.runUploadingApp(mebibytes: 6, arguments: [], server: server)
                #expect(ran.finished.status == 0, "\(ran.finished.stderr)")
                #expect(try #require(ran.record).verified)
                let posts = server.requestLog.filter { $0.method.rawValue == "POST" }
                #expect(posts.count == 1 && posts.first?.status == 200, "\(posts)")
                let sent = try #require(posts.first?.uploadedFiles.first)
                let digest = try Self.partDigest(mebibytes: 6)
                #expect(sent.bytes == 6 << 20 && sent.sha256Hex == digest)
                let story = ran.finished.stderr
                for line in [
                    "the user leaves the app at 20%: the system suspends it (SIGSTOP)",
                    "the system ends the suspended app at 50% to free memory (SIGKILL)",
                    "upload task 1 of com.example.download-lab.lesson-09 sent ",
                    "the system relaunches the app in the background for the events of com.example.download-lab.lesson-09",
                    "sent all ", "the server answered: ", sent.sha256Hex, "the upload is done (200): now the download",
                    "moved the file to ", "4,194,304 on disk",
                ] {
                    #expect(story.contains(line), "\(line)\n\(story)")
                }
                let life = try #require(ran.record?.background)
                #expect(life.handlersNeverCalled == 0 && life.launchesWithEventsLeft == 0, "\(life)")
            }
        }
    }

    /// An upload whose file is not there fails with `NSURLErrorFileDoesNotExist`, told to the
    /// app as any failure is, and nothing is sent.
    @Test func anUploadOfAMissingFileFailsAndSendsNothing() async throws {
        try await ExerciseTests.takingTurns {
            let upload = """
                var request = URLRequest(url: URL(string: "/upload", relativeTo: self.run.url)!.absoluteURL)
                            request.httpMethod = "POST"
                            self.session.uploadTask(with: request, fromFile: URL(fileURLWithPath: "/nonexistent/photo.bin")).resume()
                """
            try withLabServer { server in
                let ran = try Self.runCorrected(replacing: [(Self.startPiece, upload)], ["--life", "", "--max-attempts", "1"], size: 1 << 20,
                                                server: server)
                let story = ran.finished.stderr
                #expect(story.contains("service: upload task 1 failed: /nonexistent/photo.bin: no file to upload there"), "\(story)")
                #expect(story.contains("the download failed: /nonexistent/photo.bin: no file to upload there"), "\(story)")
                #expect(ran.finished.status == ExitStatus.transferFailed.rawValue, "\(ran.finished.status): \(story)")
                #expect(server.requestLog.isEmpty, "\(server.requestLog)")
            }
        }
    }

    /// The service killed in the middle of an upload: started again, it sends the whole file
    /// again (an upload cannot be resumed), and the server's last answer is for the exact bytes.
    /// The service reads the file as it sends: 256 MiB, and it stays under 64 MB in both lives.
    @Test func anUploadInterruptedByAServiceKillIsSentAgain() async throws {
        try await ExerciseTests.takingTurns {
            try withLabServer { server in
                let killed = Atomic(false)
                let ran = try Self.runUploadingApp(mebibytes: 256, arguments: ["--life", ""], server: server) { output in
                    let tasks = URL(fileURLWithPath: output.path + ".phone/service/tasks")
                    let deadline = Date().addingTimeInterval(60)
                    while Date() < deadline, !killed.load(ordering: .relaxed) {
                        let names = (try? FileManager.default.contentsOfDirectory(atPath: tasks.path)) ?? []
                        for name in names where name.hasSuffix(".json") {
                            guard let data = try? Data(contentsOf: tasks.appendingPathComponent(name)),
                                  let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
                                  let sent = object["sent"] as? Int, sent >= 32 << 20, sent < 200 << 20,
                                  let text = try? String(contentsOfFile: output.path + ".phone/service/pid", encoding: .utf8),
                                  let pid = Int32(text), kill(pid, SIGKILL) == 0 else { continue }
                            killed.store(true, ordering: .relaxed)
                        }
                        usleep(2_000)
                    }
                }
                let landed = killed.load(ordering: .relaxed)
                #expect(landed)
                #expect(ran.finished.status == 0, "\(ran.finished.stderr.suffix(1500))")
                #expect(try #require(ran.record).verified)
                #expect(ran.finished.stderr.contains("upload task 1 of com.example.download-lab.lesson-09 was running: it is sent again from its start"),
                        "\(ran.finished.stderr.suffix(1500))")
                let answered = server.requestLog.filter { $0.method.rawValue == "POST" && $0.status == 200 }
                #expect(answered.count == 1, "\(server.requestLog.filter { $0.method.rawValue == "POST" })")
                let sent = try #require(answered.first?.uploadedFiles.first)
                let digest = try Self.partDigest(mebibytes: 256)
                #expect(sent.bytes == 256 << 20 && sent.sha256Hex == digest)
                let life = try #require(ran.record?.background)
                #expect(life.serviceRestarts == 1)
                #expect(life.servicePeakRSSBytes > 0 && life.servicePeakRSSBytes < 64_000_000, "service \(life.servicePeakRSSBytes)")
            }
        }
    }

    /// Each rule broken alone, in otherwise corrected code, shows its own symptom, and only the
    /// symptoms that follow from it: events never delivered leave the handler uncalled and the
    /// file downloaded again.
    @Test(arguments: [
        // A default session breaks every rule, and no longer resumes after a kill.
        ("default-session", "URLSessionConfiguration.background(withIdentifier: App.sessionIdentifier)", "URLSessionConfiguration.default",
         ["default-session", "file-moved-later", "no-session-at-launch", "handler-never-called", "retries-force-quit", "session-per-download",
          "resumes-after-kill", "starts-one-download", "resumes-with-a-limit"]),
        ("file-moved-later", "try FileManager.default.moveItem(at: location, to: run.file)",
         "let file = run.file; DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { try? FileManager.default.moveItem(at: location, to: file) }",
         ["file-moved-later"]),
        // A session of another name at each launch does not see the download of the last one.
        ("no-session-at-launch", "background(withIdentifier: App.sessionIdentifier)", "background(withIdentifier: App.sessionIdentifier + UUID().uuidString)",
         ["no-session-at-launch", "handler-never-called", "default-session", "starts-one-download"]),
        ("handler-never-called", "self.backgroundCompletionHandler?()", "_ = self.backgroundCompletionHandler", ["handler-never-called"]),
        // Retrying every failure retries one the system gave up on for ever, too, and from byte 0.
        ("retries-force-quit", "if error.backgroundTaskCancelledReason == .userForceQuitApplication {",
         "if true { return session.downloadTask(with: run.url).resume() }\n        if false {",
         ["retries-force-quit", "resumes-with-a-limit", "resumes-what-the-system-gave-up"]),
        ("session-per-download", "self.session.downloadTask(with: self.run.url).resume()",
         "self.run.makeSession(configuration: .background(withIdentifier: App.sessionIdentifier), delegate: self, delegateQueue: nil).downloadTask(with: self.run.url).resume()",
         ["session-per-download"]),
    ])
    func eachBrokenRuleShowsItsOwnSymptom(check: String, piece: String, replacement: String, shown: [String]) async throws {
        try await ExerciseTests.takingTurns {
            let records = try ExerciseTests.checkCorrected("09", replacing: piece, with: replacement)
            let seen = Set(records.filter { $0.symptomSeen == true }.map(\.check))
            #expect(seen == Set(shown), "\(records.map { "\($0.check): \($0.detail)" })")
            let record = try #require(records.first { $0.check == check })
            #expect(!record.passed && record.status == .stillThere, "\(record.detail)")
        }
    }
}
