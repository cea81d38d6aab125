import Foundation
import LabCatalogue
import LabClass
import LabPlatform
import LabReport
import LabVocabulary
import Synchronization
import TestServers
import TestThreads
import Testing

/// `lab class serve` as a teacher runs it: a real server process, real submissions over real
/// sockets, its SQLite file read back, and its page read in headless Chromium.
@Suite struct ClassServerTests {
    // MARK: What the server stores, and what it refuses

    @Test func storesWhatStudentsSubmitAndRefusesTheRest() throws {
        let folder = try scratchDirectory()
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        let key = ClassFixtures.key()
        let first = ClassFixtures.submission(name: "Ada", key: key, fixed: { $0 != "no-206-check" },
                                             createdAt: Date().addingTimeInterval(-60))
        let stored = try ClassHTTP.post(server.submissions, ClassFixtures.json(first))
        #expect(stored.status == 200)
        #expect(stored.body == "stored: \(first.checks.count) checks, \(first.checks.count - 1) holding, \(Catalogue.lesson(named: "03")!.countedChecks.count - 1) of them credited\n")

        // Every refusal: its status, one line, and nothing stored.
        var tooLong = first
        tooLong.id = UUID().uuidString.lowercased()
        tooLong.name = String(repeating: "n", count: 65)
        var unknownExercise = ClassFixtures.submission(name: "Bob", key: ClassFixtures.key())
        unknownExercise.checks[0].exercise = "99-nothing"
        var unknownCheck = ClassFixtures.submission(name: "Bob", key: ClassFixtures.key())
        unknownCheck.checks[0].check = "made-up"
        var withoutName = try JSONSerialization.jsonObject(with: ClassFixtures.json(ClassFixtures.submission(name: "Bob", key: ClassFixtures.key()))) as! [String: Any]
        withoutName["name"] = nil
        let oversized = Data(repeating: UInt8(ascii: " "), count: (1 << 20) + 1)
        let refusals: [(url: String, body: Data, status: Int, line: String)] = [
            ("\(server.base)/class/WRONGCOD/submissions", ClassFixtures.json(ClassFixtures.submission(name: "Eve", key: ClassFixtures.key())),
             403, "wrong class code"),
            (server.submissions, ClassFixtures.json(ClassFixtures.submission(name: "Ada", key: ClassFixtures.key())), 403,
             "this name is taken by another student's copy of the lab; submit under another --name, or ask the teacher to release it"),
            (server.submissions, Data("{\"id\": ".utf8), 400, "the body is not JSON"),
            (server.submissions, Data("null".utf8), 400, "the body is not a submission: a JSON object is expected"),
            (server.submissions, Data("[]".utf8), 400, "the body is not a submission: a JSON object is expected"),
            (server.submissions, Data("1e999999".utf8), 400, "the body is not a submission: a JSON object is expected"),
            (server.submissions, try JSONSerialization.data(withJSONObject: withoutName), 400, "the field name is missing"),
            (server.submissions, ClassFixtures.json(tooLong), 400, "the name is longer than 64 characters"),
            (server.submissions, ClassFixtures.json(unknownExercise), 400, "there is no exercise \"99-nothing\""),
            (server.submissions, ClassFixtures.json(unknownCheck), 400, "exercise 03 has no check \"made-up\""),
            (server.submissions, oversized, 413, "the body is larger than 1 MiB"),
            // Still being sent when the answer goes out: the answer must reach the client all the same.
            (server.submissions, Data(repeating: UInt8(ascii: " "), count: 32 << 20), 413, "the body is larger than 1 MiB"),
        ]
        for refusal in refusals {
            let answer = try ClassHTTP.post(refusal.url, refusal.body)
            #expect(answer.status == refusal.status, "\(refusal.line)")
            #expect(answer.body == refusal.line + "\n")
        }
        #expect(try server.stored().ids == [first.id])
        #expect(try ClassHTTP.get("\(server.base)/teacher/0123456789abcdef0123456789abcdef").status == 403)
        #expect(try ClassHTTP.get(server.teacherURL + "/count").body == "1\n")

        // A replay is stored once; a newer run replaces the older on the grid, and both are kept.
        let replay = try ClassHTTP.post(server.submissions, ClassFixtures.json(first))
        #expect(replay.status == 200)
        #expect(replay.body.hasPrefix("already stored: "))
        let column = ClassGrid.Column(exercise: "03-outputstream", number: "03", check: "no-206-check", baseline: false)
        #expect(try server.stored().grid.standing("Ada", column) == .failing)
        let newer = ClassFixtures.submission(name: "Ada", key: key)
        #expect(try ClassHTTP.post(server.submissions, ClassFixtures.json(newer)).status == 200)
        let (ids, grid) = try server.stored()
        #expect(ids == [first.id, newer.id])
        #expect(grid.standing("Ada", column) == .fixed)
        #expect(grid.students == ["Ada"])
    }

    // MARK: Real `lab` processes submitting

    @Test func aRealCheckSubmitsWithoutChangingItsResult() async throws {
        try await ExerciseTests.takingTurns {
            let folder = try scratchDirectory()
            let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
            defer { server.stop() }
            let alone = try ExerciseTests.lab(["exercise", "check", "00"])
            let submitted = try ExerciseTests.lab(["exercise", "check", "00", "--submit", server.classURL, "--name", "Grace Hopper"])
            #expect(submitted.status == alone.status)
            #expect(submitted.status == 1)
            #expect(Self.checkLines(submitted.stdout) == Self.checkLines(alone.stdout))
            let lesson = Catalogue.lesson(named: "00")!
            // The starting code: its clean run verifies, and earns nothing.
            #expect(submitted.stderr.contains("submitted to the class: stored: \(lesson.checks.count) checks, 0 holding, 0 of them credited\n"), "\(submitted.stderr)")
            let grid = try server.stored().grid
            #expect(grid.students == ["Grace Hopper"])
            let cleanColumn = ClassGrid.Column(exercise: lesson.id.rawValue, number: "00", check: "clean", baseline: true)
            #expect(grid.standing("Grace Hopper", cleanColumn) == .baseline)
            let statusColumn = ClassGrid.Column(exercise: lesson.id.rawValue, number: "00", check: "status-ignored", baseline: false)
            #expect(grid.standing("Grace Hopper", statusColumn) == .notStarted)

            // A server that does not answer: the same result, one line, and the run waits in the outbox.
            guard let closed = boundLoopbackSocket() else { throw ClassTestError("no free port") }
            defer { close(closed.descriptor) }
            let nobody = "http://127.0.0.1:\(closed.port)/class/\(server.classCode)"
            let unsent = try ExerciseTests.lab(["exercise", "check", "00", "--submit", nobody, "--name", "Grace Hopper"])
            #expect(unsent.status == alone.status)
            #expect(Self.checkLines(unsent.stdout) == Self.checkLines(alone.stdout))
            let line = try #require(unsent.stderr.split(separator: "\n").first { $0.hasPrefix("not submitted: ") })
            let kept = try #require(line.firstMatch(of: /Kept in (\S+\.json);/)?.1)
            #expect(line.hasSuffix("send it later with `swift run lab class submit \(nobody) --name 'Grace Hopper'`"))

            // Sent later from another folder's outbox, so this package's stays as it was.
            let elsewhere = try scratchDirectory()
            let outbox = elsewhere.appendingPathComponent(".build/class-outbox")
            try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
            try FileManager.default.moveItem(atPath: String(kept), toPath: outbox.appendingPathComponent("waiting.json").path)
            // With the key alone, as a student moving to another machine takes it: the line naming
            // the copy that made it would make the new folder refuse it as another copy's.
            let key = try #require(try String(contentsOf: ExerciseTests.packageRoot.appendingPathComponent(".build/class-student-key"),
                                              encoding: .utf8).split(separator: "\n").first)
            try Data(key.utf8).write(to: elsewhere.appendingPathComponent(".build/class-student-key"))
            let later = try ChildProcess("lab", ["class", "submit", server.classURL, "--name", "Grace Hopper"])
            later.process.currentDirectoryURL = elsewhere
            try later.start()
            let sent = later.wait(timeout: 60)
            #expect(sent.status == 0, "\(sent.stderr)")
            #expect(sent.stdout == "waiting.json: stored: \(lesson.checks.count) checks, 0 holding, 0 of them credited\n")
            #expect(try FileManager.default.contentsOfDirectory(atPath: outbox.path).isEmpty)
            #expect(try server.stored().ids.count == 2)
        }
    }

    @Test(arguments: [
        (["exercise", "check", "00", "--submit", "http://127.0.0.1:1/class/ABC"], "lab exercise check: --submit and --name go together"),
        (["exercise", "check", "00", "--submit", "ftp://host/class/ABC", "--name", "Ada"],
         "lab exercise check: --submit: expected the class's address, http://HOST:PORT/class/CODE, got \"ftp://host/class/ABC\""),
        (["exercise", "check", "00", "--submit", "http://host:8080/teacher/abc", "--name", "Ada"],
         "lab exercise check: --submit: expected the class's address, http://HOST:PORT/class/CODE, got \"http://host:8080/teacher/abc\""),
        (["exercise", "check", "00", "--submit", "http://host:8080/class/ABC", "--name", String(repeating: "x", count: 65)],
         "lab exercise check: --name: the name is longer than 64 characters"),
        (["exercise", "check", "00", "--variant", "corrected", "--submit", "http://host:8080/class/ABC", "--name", "Ada"],
         "lab exercise check: --submit sends your own code's results; it does not go with --variant"),
        (["compare", "--quick", "--submit", "http://host:8080/class/ABC", "--name", "Ada\u{7}"],
         "lab compare: --name: the name has a control character in it"),
        (["class", "submit", "nonsense", "--name", "Ada"],
         "lab class submit: the address: expected the class's address, http://HOST:PORT/class/CODE, got \"nonsense\""),
    ])
    func aStudentsBadInputGetsOneLineAndExit64(arguments: [String], line: String) throws {
        let refused = try ChildProcess.run("lab", arguments, timeout: 60)
        #expect(refused.status == 64)
        #expect(refused.stderr == line + "\n")
        #expect(refused.stdout.isEmpty)
    }

    /// `lab compare --submit` from a real comparison, to a server open to the network: the
    /// comparison's own output is the same, and the page merges it, a row per strategy.
    @Test func aComparisonIsSubmittedAndMergedOnThePage() async throws {
        try await ExerciseTests.takingTurns {
            let folder = try scratchDirectory()
            let server = try ClassServerProcess(data: folder.appendingPathComponent("class"), listen: "0.0.0.0:0")
            let banner = server.child.stdoutSoFar
            #expect(banner.hasPrefix("Download Lab class server OPEN TO THE NETWORK on 0.0.0.0:\(server.port): "))
            let compare = try ExerciseTests.lab(["compare", "--lessons", "00", "--sizes", "1MiB", "--scenarios", "clean",
                                                 "--repetitions", "1", "-o", folder.appendingPathComponent("results").path,
                                                 "--submit", server.classURL, "--name", "Katherine Johnson"], timeout: 300)
            #expect(compare.status == 0, "\(compare.stderr.suffix(500))")
            #expect(compare.stdout == folder.appendingPathComponent("results/report.html").path + "\n")
            #expect(compare.stderr.hasSuffix("submitted to the class: stored: a comparison of 2 runs\n"))
            let page = try ClassHTTP.get(server.teacherURL)
            let rows = page.body.components(separatedBy: "<tr data-lesson=\"00-small-file\" data-variant=")
            #expect(rows.count == 3, "a row per variant")
            #expect(page.body.contains("<td data-unexpected=\"0\">none</td>"))
            #expect(try server.stored().grid.comparisons.map(\.student) == ["Katherine Johnson"])

            let stopped = server.stop()
            #expect(stopped.status == 0)
            #expect(stopped.stdout.hasSuffix("\nStopping; the class is kept in \(folder.appendingPathComponent("class").path).\n"))
        }
    }

    /// The lines for people, without the seconds and the commands, which differ run to run.
    private static func checkLines(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").filter { $0.hasPrefix("✔") || $0.hasPrefix("✗") }.map { String($0.prefix(30)) }
    }

    // MARK: The teacher's page, in a browser

    /// headless Chromium is installed by .ci/run; in CI its absence fails the test instead of skipping it.
    @Test(.enabled(if: runningInCI || executable(named: "chromium-headless-shell") != nil,
                   "chromium-headless-shell is not installed; the browser test is skipped (apt-get install chromium-headless-shell)"))
    func theTeachersPageShowsEveryStudentAndCheckAndUpdatesItself() throws {
        let folder = try scratchDirectory()
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        // Each within the 64 characters a name may have, each one that would act if it were markup.
        let names = ["Ada Lovelace", "Alan Turing", #"<img src=x onerror="document.body.dataset.pwned=1">"#,
                     "<script>document.body.dataset.pwned=2</script>", "Zoë & \"Quotes\""]
        for (index, name) in names.enumerated() {
            let submission = ClassFixtures.submission(name: name, key: ClassFixtures.key(), exercise: "02-filehandle",
                                                      fixed: { _ in index % 2 == 0 })
            #expect(try ClassHTTP.post(server.submissions, ClassFixtures.json(submission)).status == 200)
        }
        let late = ClassFixtures.submission(name: "Late Student", key: ClassFixtures.key())
        let results = try Browser.run(server.teacherURL, steps: [
            ["eval": "[...new Set([...document.querySelectorAll('tbody th.student')].map(e => e.textContent))]"],
            ["eval": "[...document.querySelectorAll('details.exercise')].map(e => e.dataset.exercise + ':' + [...e.querySelectorAll('thead th.check')].map(c => c.dataset.check).join(' '))"],
            ["eval": "document.querySelectorAll('main img, main script').length + ':' + (document.body.dataset.pwned || 'none')"],
            ["eval": "[...document.querySelectorAll('tfoot td')].filter(e => e.dataset.check === '02-filehandle/range-colon').map(e => e.title)"],
            ["post": ["url": server.submissions, "body": String(decoding: ClassFixtures.json(late), as: UTF8.self)]],
            ["waitFor": "[...document.querySelectorAll('tbody th.student')].some(e => e.textContent === 'Late Student')", "seconds": 10],
            ["eval": "document.getElementById('live').textContent"],
        ])
        #expect(results[0] as? [String] == names.sorted { $0.localizedStandardCompare($1) == .orderedAscending })
        // Every exercise has its section; only the one submitted has a table, of all its checks.
        let sections = Catalogue.lessons.map { lesson in
            lesson.id.rawValue + ":" + (lesson.id.rawValue == "02-filehandle" ? lesson.everyCheck.map { "\(lesson.id.rawValue)/\($0.id)" }.joined(separator: " ") : "")
        }
        #expect(results[1] as? [String] == sections)
        #expect(results[2] as? String == "0:none")
        #expect(results[3] as? [String] == ["3 of 5 students who changed the code and ran it"])
        #expect(results[4] as? Int == 200)
        #expect(results[5] as? Bool == true, "the page did not show the new submission without a reload")
        #expect(results[6] as? String == " · updates by itself")

        // Without scripts, the same page shows everything but updating.
        let plain = try Browser.run(server.teacherURL + "?plain", steps: [
            ["eval": "new Set([...document.querySelectorAll('tbody th.student')].map(e => e.textContent)).size"],
            ["eval": "document.getElementById('live').textContent"],
        ], scripts: false)
        #expect(plain[0] as? Int == names.count + 1)
        #expect(plain[1] as? String == " · reload the page for new submissions")
    }

    // MARK: Clients that hold on

    /// 300 connections that send nothing, from ten addresses: those over the bound are closed at
    /// once, the rest after the idle timeout, and a student can submit again.
    @Test func idleConnectionsCannotHoldTheServer() throws {
        let folder = try scratchDirectory()
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        let idle = (0..<300).compactMap { index in LoopbackClient(port: server.port, from: "127.0.0.\(11 + index % 10)") }
        defer { idle.forEach { $0.close() } }
        #expect(idle.count == 300)
        Thread.sleep(forTimeInterval: 1)
        let closedAtOnce = idle.filter(\.wasClosedByServer).count
        #expect(closedAtOnce == 300 - ClassServer.maximumConnections, "server's stderr: \(server.stderrSoFar.prefix(2000))")
        Thread.sleep(forTimeInterval: Double(ClassServer.idleTimeout.nanoseconds) / 1e9 + 2)
        let stillOpen = idle.filter { !$0.wasClosedByServer }.count
        #expect(stillOpen == 0)
        let submission = ClassFixtures.submission(name: "After", key: ClassFixtures.key())
        #expect(try ClassHTTP.post(server.submissions, ClassFixtures.json(submission)).status == 200)
    }

    /// One address holds at most its share of the connections: past it, its own are closed at
    /// once, and a student at another address is still served.
    @Test func oneClientCannotTakeEveryConnection() throws {
        let folder = try scratchDirectory()
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        let greedy = (0..<(ClassServer.maximumConnectionsPerClient + 10)).compactMap { _ in LoopbackClient(port: server.port, from: "127.0.0.9") }
        defer { greedy.forEach { $0.close() } }
        Thread.sleep(forTimeInterval: 1)
        #expect(greedy.filter(\.wasClosedByServer).count == 10)
        let submission = ClassFixtures.submission(name: "Elsewhere", key: ClassFixtures.key())
        #expect(try ClassHTTP.post(server.submissions, ClassFixtures.json(submission)).status == 200)
    }

    // MARK: A class at once, and a crash

    /// 60 students submitting 20 times each, all at once: four of them real `lab class submit`
    /// processes sending what waits in their outboxes, the rest from here. Nothing is lost,
    /// nothing fails, the page comes in under a second and the server stays under 150 MB.
    @Test func sixtyStudentsSubmittingAtOnce() throws {
        let folder = try scratchDirectory()
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        let peak = RSSSampler(pid: server.pid)
        var students: [ChildProcess] = []
        var expected = Set<String>()
        for student in 0..<4 {
            let home = try scratchDirectory()
            let outbox = home.appendingPathComponent(".build/class-outbox")
            try FileManager.default.createDirectory(at: outbox, withIntermediateDirectories: true)
            let key = ClassFixtures.key()
            // The key the results were made with, as `lab` keeps it beside the outbox.
            try Data(key.utf8).write(to: home.appendingPathComponent(".build/class-student-key"))
            for attempt in 0..<20 {
                let submission = ClassFixtures.submission(name: "Process \(student)", key: key, fixed: { _ in attempt % 3 == 0 },
                                                          createdAt: Date().addingTimeInterval(Double(attempt)))
                expected.insert(submission.id)
                try ClassFixtures.json(submission).write(to: outbox.appendingPathComponent("\(submission.id).json"))
            }
            let child = try ChildProcess("lab", ["class", "submit", server.classURL, "--name", "Process \(student)"])
            child.process.currentDirectoryURL = home
            students.append(child)
        }
        for child in students { try child.start() }
        let loaded = try ClassHTTP.load(server.submissions, students: 56, submissions: 20)
        for child in students {
            let finished = child.wait(timeout: 120)
            #expect(finished.status == 0, "\(finished.stderr)")
        }
        peak.stop()
        #expect(loaded.failures.isEmpty, "\(loaded.failures.prefix(3))")
        expected.formUnion(loaded.acknowledged)
        let stored = try server.stored()
        #expect(stored.ids == expected)
        #expect(stored.ids.count == 60 * 20)
        #expect(stored.grid.students.count == 60)
        // As a person sorts them: Student 2 before Student 10.
        #expect(Array(stored.grid.students[3...6]) == ["Process 3", "Student 0", "Student 1", "Student 2"])

        let started = ContinuousClock.now
        let page = try ClassHTTP.get(server.teacherURL)
        let took = ContinuousClock.now - started
        #expect(page.status == 200)
        // A bound with a wide margin, not a speed figure (the page draws in 250 to 254 ms, docs/class.md):
        // the whole suite runs beside this test, and the request starts a Python process.
        #expect(took < .seconds(5), "the page took \(took)")
        #expect(peak.highest < 150 << 20, "peak RSS \(peak.highest >> 20) MiB")
    }

    /// `kill -9` in the middle of the same load, then a restart with the same data: every
    /// submission the server acknowledged is there.
    @Test func aKilledServerLosesNoAcknowledgedSubmission() throws {
        let folder = try scratchDirectory()
        let data = folder.appendingPathComponent("class")
        let server = try ClassServerProcess(data: data)
        let loaded = try ClassHTTP.load(server.submissions, students: 60, submissions: 20, kill: (server.pid, 300))
        _ = server.child.wait(timeout: 10)
        #expect(loaded.acknowledged.count >= 300)
        #expect(!loaded.failures.isEmpty, "the kill came after the load ended")

        let restarted = try ClassServerProcess(data: data)
        defer { restarted.stop() }
        #expect(restarted.classCode == server.classCode)
        #expect(restarted.teacherToken == server.teacherToken)
        let stored = try restarted.stored().ids
        #expect(loaded.acknowledged.isSubset(of: stored), "\(loaded.acknowledged.subtracting(stored).count) acknowledged submissions lost")
        let count = try ClassHTTP.get(restarted.teacherURL + "/count").body
        #expect(count == "\(stored.count)\n")
    }
}
