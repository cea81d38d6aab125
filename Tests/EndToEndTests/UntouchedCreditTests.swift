import Foundation
import LabCatalogue
import LabClass
import LabReport
import LabVocabulary
import Testing

/// Credit is for what the student changed: a check the starting code fails, holding on changed
/// code. Ada sent the starting code; Cy added a comment and fixed nothing; Ben fixed
/// status-ignored. The clean check, which the starting code passes too, is a baseline for all
/// three: every export scores it 0, and the page's "stuck" list leaves it out.
struct UntouchedCreditTests {
    static let columns = [ClassGrid.Column(exercise: "00-small-file", number: "00", check: "clean", baseline: true),
                          ClassGrid.Column(exercise: "00-small-file", number: "00", check: "status-ignored", baseline: false)]
    static let grid: ClassGrid = {
        func cell(_ student: String, _ check: String, _ status: CheckStatus, passed: Bool, attempted: Bool) -> ClassGrid.Cell {
            ClassGrid.Cell(student: student, exercise: "00-small-file", check: check, status: status, passed: passed, attempted: attempted,
                           detail: "\(check) as seen", submittedAt: "2026-11-27T10:00:00Z", seconds: 1.25)
        }
        // Ada's clean check says passed, as a lab before this one sent it: the grid does not trust it.
        return ClassGrid(students: ["Ada", "Ben", "Cy"], columns: columns, cells: [
            cell("Ada", "clean", .verifies, passed: true, attempted: false),
            cell("Ada", "status-ignored", .stillThere, passed: false, attempted: false),
            cell("Ben", "clean", .verifies, passed: true, attempted: true),
            cell("Ben", "status-ignored", .fixed, passed: true, attempted: true),
            cell("Cy", "clean", .verifies, passed: true, attempted: true),
            cell("Cy", "status-ignored", .stillThere, passed: false, attempted: true),
        ], comparisons: [], submissions: 3)
    }()

    @Test func csvScoresItZero() {
        let rows = ClassExport.csv(Self.grid).components(separatedBy: "\r\n")  // RFC 4180 lines
        #expect(rows.contains("Ada,baseline,not started,0 of 1"), "\(rows)")
        #expect(rows.contains("Cy,baseline,still failing,0 of 1"), "\(rows)")
        #expect(rows.contains("Ben,baseline,fixed,1 of 1"), "\(rows)")
    }

    /// A baseline is skipped, never a pass; each case has its check's time.
    @Test func junitCountsItFailed() {
        let xml = ClassExport.junit(Self.grid, at: Date(timeIntervalSince1970: 0))
        let suites = xml.components(separatedBy: "<testsuite ").dropFirst()
        for suite in suites {
            #expect(suite.contains("<testcase name=\"clean\" classname=\"exercise-00-small-file\" time=\"1.250\">\n      <skipped message=\"baseline: "),
                    "\(suite)")
            #expect(suite.contains("tests=\"2\"") && suite.contains("skipped=\"1\" time=\"2.500\""), "\(suite)")
        }
        for student in ["Ada", "Cy"] {
            let suite = suites.first { $0.hasPrefix("name=\"\(student)\"") } ?? ""
            #expect(suite.contains("failures=\"1\"") && !suite.contains("time=\"1.250\"/>"), "\(suite)")
        }
        #expect(!xml.contains("time=\"0\""), "\(xml)")
    }

    @Test func exercismFailsIt() throws {
        for student in ["Ada", "Cy"] {
            let results = try #require(JSONSerialization.jsonObject(with: ClassExport.exercism(Self.grid, student: student)) as? [String: Any])
            let tests = try #require(results["tests"] as? [[String: Any]])
            #expect(results["status"] as? String == "fail")
            #expect(tests.map { $0["name"] as? String } == ["00 status-ignored"])
            #expect(tests.map { $0["status"] as? String } == ["fail"])
        }
    }

    @Test func gradescopeScoresItZero() throws {
        func score(_ student: String) throws -> (Double?, [Double?]) {
            let results = try #require(JSONSerialization.jsonObject(with: ClassExport.gradescope(Self.grid, student: student)) as? [String: Any])
            let tests = try #require(results["tests"] as? [[String: Any]])
            return (results["score"] as? Double, tests.map { $0["max_score"] as? Double })
        }
        #expect(try score("Ada").0 == 0 && score("Cy").0 == 0 && score("Ben").0 == 1)
        #expect(try score("Cy").1 == [0, 1], "the baseline is out of 0")
    }

    /// "Where the class is stuck" counts those who changed the code: Cy is stuck on
    /// status-ignored, Ada has not started, and clean is no one's trouble. The pass rate
    /// leaves Ada out, and the baseline gets none.
    @Test func theStuckListCountsOnlyThoseWhoStarted() throws {
        let html = ClassPage(grid: Self.grid, scriptPath: nil, releasePath: nil, now: Date(timeIntervalSince1970: 0)).render()
        let stuck = try #require(html.components(separatedBy: "<section id=\"stuck\">").dropFirst().first?.components(separatedBy: "</section>").first)
        #expect(stuck.contains("00 status-ignored: 1 of 2 not fixed"), "\(stuck)")
        #expect(stuck.contains(">Cy<") && !stuck.contains(">Ada<") && !stuck.contains("00 clean"), "\(stuck)")
        #expect(html.contains("data-fixed=\"1\" data-ran=\"2\""), "\(html)")
        #expect(html.contains(">baseline</td>"), "\(html)")
        #expect(html.components(separatedBy: "data-standing=\"fixed\"").count == 2, "only Ben's status-ignored shows credit")
    }
}

/// The same, from real runs: a comment line added to every exercise, checked and submitted by
/// the real `lab`, to a real class server, exported by the real `lab class export`.
struct CommentCreditTests {
    @Test func aCommentInEveryExerciseEarnsNothingAnywhere() async throws {
        let folder = try scratchDirectory()
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        let submitted = try await ExerciseTests.takingTurns {
            try Self.withACommentInEvery(Catalogue.lessons[...]) {
                try ExerciseTests.lab(["exercise", "check", "--all", "--submit", server.classURL, "--name", "Commenter"])
            }
        }
        #expect(submitted.stderr.contains(" 0 of them credited\n"), "\(submitted.stderr)")
        let counted = Catalogue.lessons.map(\.countedChecks.count).reduce(0, +)
        func export(_ format: String, _ extra: [String] = []) throws -> String {
            let finished = try ExerciseTests.lab(["class", "export", "--data", server.data.path, "--format", format] + extra)
            try #require(finished.status == 0, "\(finished.stderr)")
            return finished.stdout
        }
        let csv = try export("csv").components(separatedBy: "\r\n")
        #expect(csv.dropFirst().first?.hasSuffix(",0 of \(counted)") == true, "\(csv)")
        #expect(csv.dropFirst().first?.contains(",fixed,") == false)
        let junit = try export("junit")
        #expect(junit.contains("tests=\"\(Catalogue.lessons.map(\.everyCheck.count).reduce(0, +))\""))
        #expect(!junit.contains("\"/>\n    <testcase") && !junit.contains("\"/>\n    <system-out"), "a case with no failure, error or skip passed")
        for format in ["exercism", "gradescope"] {
            let out = folder.appendingPathComponent(format)
            _ = try export(format, ["-o", out.path])
            let student = try #require(try FileManager.default.contentsOfDirectory(atPath: out.path).first)
            let results = try #require(JSONSerialization.jsonObject(with: Data(contentsOf: out.appendingPathComponent("\(student)/results.json")))
                                       as? [String: Any])
            if format == "gradescope" {
                #expect(results["score"] as? Double == 0, "\(results["output"] ?? "")")
            } else {
                let statuses = (results["tests"] as? [[String: Any]] ?? []).compactMap { $0["status"] as? String }
                #expect(results["status"] as? String == "fail" && !statuses.contains("pass") && statuses.count == counted, "\(statuses)")
            }
        }
        let page = try ClassHTTP.get(server.teacherURL)
        #expect(page.status == 200)
        #expect(!page.body.contains("data-standing=\"fixed\""), "a cell shows credit")
        #expect(page.body.contains("done by 0") && !page.body.contains("done by 1"))
    }

    /// Runs `body` with "// I was here" above the code of each exercise in `lessons`.
    static func withACommentInEvery<T>(_ lessons: ArraySlice<LessonDefects>, _ body: () throws -> T) throws -> T {
        guard let lesson = lessons.first else { return try body() }
        let code = "// I was here\n" + (try ExerciseTests.startingCode(lesson))
        return try ExerciseTests.withExercise(lesson, holding: code) { try withACommentInEvery(lessons.dropFirst(), body) }
    }
}

/// The page opens every exercise a student is on: one `check --all` sends several at the same
/// moment, and each of them that is not done is open; a done one folds.
struct ClassPageFoldingTests {
    @Test func exercisesChangedTogetherAreOpenTogether() {
        let exercises = [("10-conditional-get", "10", "same-size-is-current"), ("11-segmented", "11", "shared-position"),
                         ("00-small-file", "00", "status-ignored")]
        let columns = exercises.map { ClassGrid.Column(exercise: $0.0, number: $0.1, check: $0.2, baseline: false) }
        let at = "2026-11-27T10:00:00Z"
        let cells = [
            ClassGrid.Cell(student: "Ada", exercise: "10-conditional-get", check: "same-size-is-current", status: .stillThere, passed: false,
                           attempted: true, detail: "", submittedAt: at, seconds: 1),
            ClassGrid.Cell(student: "Ada", exercise: "11-segmented", check: "shared-position", status: .stillThere, passed: false,
                           attempted: true, detail: "", submittedAt: at, seconds: 1),
            ClassGrid.Cell(student: "Ada", exercise: "00-small-file", check: "status-ignored", status: .fixed, passed: true,
                           attempted: true, detail: "", submittedAt: at, seconds: 1),
        ]
        let grid = ClassGrid(students: ["Ada"], columns: columns, cells: cells, comparisons: [], submissions: 1)
        let html = ClassPage(grid: grid, scriptPath: nil, releasePath: nil, now: Date(timeIntervalSince1970: 0)).render()
        func opening(_ exercise: String) -> String {
            html.components(separatedBy: "id=\"exercise-\(exercise)\"").dropFirst().first?.prefix(80).description ?? ""
        }
        #expect(html.contains("<details class=\"exercise\" id=\"exercise-10-conditional-get\" data-exercise=\"10-conditional-get\" open"), "\(html.prefix(3000))")
        #expect(html.contains("<details class=\"exercise\" id=\"exercise-11-segmented\" data-exercise=\"11-segmented\" open"))
        #expect(!html.contains("id=\"exercise-00-small-file\" data-exercise=\"00-small-file\" open"), "a done exercise folds")
    }
}
