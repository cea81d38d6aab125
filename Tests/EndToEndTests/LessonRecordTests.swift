import Foundation
import LabVocabulary
import Testing

/// A lesson's `--json` record is read with its schema checked, and what spoils it is said: a
/// program's own `print`, a record cut short, another schema, a missing field.
struct LessonRecordTests {
    /// One real record: lesson 00 against its embedded server.
    static func realRecord() throws -> String {
        let finished = try ChildProcess.run(LessonID.smallFile.executable, ["--json", "--quiet", "--size", "64KiB",
                                                                           "--output", try scratchDirectory().appendingPathComponent("r.bin").path])
        #expect(finished.status == 0, "\(finished.stderr)")
        return finished.stdout
    }

    @Test func eachWayARecordIsSpoiledIsSaid() throws {
        let record = try Self.realRecord()
        #expect(LessonResult.read(standardOutput: record).record?.lesson == .smallFile)
        let line = record.trimmingCharacters(in: .whitespacesAndNewlines)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        func json(_ edit: (inout [String: Any]) -> Void) throws -> String {
            var copy = object
            edit(&copy)
            return String(decoding: try JSONSerialization.data(withJSONObject: copy), as: UTF8.self)
        }
        let cases: [(String, String?)] = [
            ("", nil),
            ("\n  \n", nil),
            (record + "got here\n", "standard output holds more than the record, \"got here\""),
            ("debug \u{1B}[31mred\n" + record, "\"debug ?[31mred\""),
            (record + record, "standard output holds 2 records where a run prints one"),
            (String(line.prefix(line.count / 2)), "its record is unreadable: not JSON"),
            (try json { $0["schema"] = "download-lab.lesson-result/0" }, "schema is \"download-lab.lesson-result/0\""),
            (try json { $0["outcome"] = nil }, "its record is unreadable: missing outcome"),
            (try json { $0["attempts"] = "two" }, "its record is unreadable: wrong type at attempts"),
        ]
        for (output, problem) in cases {
            let reading = LessonResult.read(standardOutput: output)
            if let problem {
                #expect(reading.problem?.contains(problem) == true, "\(output.prefix(60)): \(reading.problem ?? "read")")
                #expect(reading.problem?.contains("\n") == false)
            } else {
                #expect(reading.record == nil && reading.problem == nil, "\(output.prefix(60))")
            }
        }
    }
}
