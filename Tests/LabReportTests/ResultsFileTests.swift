import Foundation
import TestFolders
import LabReport
import LabVocabulary
import Testing

/// `ComparisonResults.read` takes only files of its own schema and says in one line what is wrong.
struct ResultsFileTests {
    private func file(_ text: String) throws -> URL {
        let url = TestFolders.root
            .appendingPathComponent("results-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func refusesAnotherSchema() throws {
        let url = try file(#"{"schema": "download-lab.lesson-result/1"}"#)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = try #require(throws: ResultsFileError.self) { try ComparisonResults.read(from: url) }
        #expect(error.description == "\(url.path): schema is \"download-lab.lesson-result/1\", expected \"download-lab.results/1\"")
    }

    @Test func refusesSomethingThatIsNotJSON() throws {
        let url = try file("<html></html>")
        defer { try? FileManager.default.removeItem(at: url) }
        let error = try #require(throws: ResultsFileError.self) { try ComparisonResults.read(from: url) }
        #expect(error.description == "\(url.path): not JSON: it is cut short, or not a results file")
    }

    /// A file cut short, an empty one, an array, and a value no field can take: each says which.
    @Test(arguments: [(#"{"schema": "download-lab.res"#, "not JSON: it is cut short, or not a results file"), ("", "it is empty"),
                      ("[1]", "not a JSON object")])
    func saysWhatKindOfNotAResultsFile(text: String, reason: String) throws {
        let url = try file(text)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = try #require(throws: ResultsFileError.self) { try ComparisonResults.read(from: url) }
        #expect(error.description == "\(url.path): \(reason)")
    }

    @Test func namesTheFirstMissingField() throws {
        let url = try file(#"{"schema": "download-lab.results/1", "label": "x"}"#)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = try #require(throws: ResultsFileError.self) { try ComparisonResults.read(from: url) }
        #expect(error.description.hasPrefix("\(url.path): missing "), "\(error)")
    }

    @Test func refusesAFileThatIsNotThere() throws {
        let url = URL(fileURLWithPath: "/nonexistent/results.json")
        let error = try #require(throws: ResultsFileError.self) { try ComparisonResults.read(from: url) }
        #expect(error.description == "/nonexistent/results.json: cannot read it")
    }
}
