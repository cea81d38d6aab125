import Foundation
import LabClass
import LabReport
import LabVocabulary
import Testing

/// Code identical to the starting code earns nothing, whatever its checks found: every export
/// scores it 0, and the page's "stuck" list leaves it out. Ada sent the starting code, whose
/// clean run verifies; Ben changed the code and fixed the same check.
struct UntouchedCreditTests {
    static let columns = [ClassGrid.Column(exercise: "00-small-file", number: "00", check: "clean"),
                          ClassGrid.Column(exercise: "00-small-file", number: "00", check: "status-ignored")]
    static let grid: ClassGrid = {
        func cell(_ student: String, _ check: String, _ status: CheckStatus, passed: Bool, attempted: Bool) -> ClassGrid.Cell {
            ClassGrid.Cell(student: student, exercise: "00-small-file", check: check, status: status, passed: passed, attempted: attempted,
                           detail: "\(check) as seen", submittedAt: "2026-11-27T10:00:00Z")
        }
        // Ada's clean check says passed, as a lab before this one sent it: the grid does not trust it.
        return ClassGrid(students: ["Ada", "Ben"], columns: columns, cells: [
            cell("Ada", "clean", .verifies, passed: true, attempted: false),
            cell("Ada", "status-ignored", .stillThere, passed: false, attempted: false),
            cell("Ben", "clean", .verifies, passed: true, attempted: true),
            cell("Ben", "status-ignored", .stillThere, passed: false, attempted: true),
        ], comparisons: [], submissions: 2)
    }()

    @Test func csvScoresItZero() {
        let rows = ClassExport.csv(Self.grid).components(separatedBy: "\r\n")  // RFC 4180 lines
        #expect(rows.contains("Ada,not started,not started,0 of 2"), "\(rows)")
        #expect(rows.contains("Ben,fixed,still failing,1 of 2"), "\(rows)")
    }

    @Test func junitCountsItFailed() {
        let xml = ClassExport.junit(Self.grid, at: Date(timeIntervalSince1970: 0))
        let ada = xml.components(separatedBy: "<testsuite ").first { $0.hasPrefix("name=\"Ada\"") } ?? ""
        #expect(ada.contains("tests=\"2\" failures=\"2\""), "\(ada)")
        #expect(!ada.contains("<testcase name=\"clean\" classname=\"exercise-00-small-file\" time=\"0\"/>"), "\(ada)")
    }

    @Test func exercismFailsIt() throws {
        let results = try #require(JSONSerialization.jsonObject(with: ClassExport.exercism(Self.grid, student: "Ada")) as? [String: Any])
        let tests = try #require(results["tests"] as? [[String: Any]])
        #expect(results["status"] as? String == "fail")
        #expect(tests.map { $0["status"] as? String } == ["fail", "fail"])
    }

    @Test func gradescopeScoresItZero() throws {
        let ada = try #require(JSONSerialization.jsonObject(with: ClassExport.gradescope(Self.grid, student: "Ada")) as? [String: Any])
        let ben = try #require(JSONSerialization.jsonObject(with: ClassExport.gradescope(Self.grid, student: "Ben")) as? [String: Any])
        #expect(ada["score"] as? Double == 0 && ben["score"] as? Double == 1, "\(ada) \(ben)")
    }

    /// "Where the class is stuck" counts those who changed the code: Ben is stuck on
    /// status-ignored, Ada has not started, and clean is no one's trouble.
    @Test func theStuckListCountsOnlyThoseWhoStarted() throws {
        let page = ClassPage(grid: Self.grid, scriptPath: nil, now: Date(timeIntervalSince1970: 0)).render()
        let stuck = try #require(page.components(separatedBy: "<section id=\"stuck\">").dropFirst().first?.components(separatedBy: "</section>").first)
        #expect(stuck.contains("00 status-ignored: 1 of 1 not fixed"), "\(stuck)")
        #expect(stuck.contains(">Ben<") && !stuck.contains(">Ada<") && !stuck.contains("00 clean"), "\(stuck)")
    }
}
