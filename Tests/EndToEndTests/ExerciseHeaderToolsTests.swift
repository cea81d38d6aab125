import Foundation
import LabCatalogue
import Testing

/// What the exercise's header gives the student: the API its fix needs, where the catalogue
/// names it, in the file the student edits.
struct ExerciseHeaderToolsTests {
    @Test(arguments: Catalogue.lessons.filter { !$0.tools.isEmpty }.map(\.id.rawValue))
    func theHeaderNamesTheToolsOfTheFix(lesson name: String) throws {
        let lesson = try #require(Catalogue.lesson(named: name))
        let file = ExerciseTests.packageRoot.appendingPathComponent(ExerciseSource.path(for: lesson))
        let header = try String(contentsOf: file, encoding: .utf8).split(separator: "\n").prefix { $0.hasPrefix("///") }
        for tool in lesson.tools {
            #expect(header.contains("///     " + tool[...]), "\(ExerciseSource.path(for: lesson)) lacks \(tool)")
        }
    }
}
