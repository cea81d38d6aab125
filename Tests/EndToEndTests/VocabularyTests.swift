import Foundation
import LabCatalogue
import LabVocabulary
import Testing

/// The lab's names are declared once; what cannot import them (Package.swift, the folders) agrees.
struct VocabularyTests {
    @Test func packageSwiftListsTheLessonsOfTheVocabulary() throws {
        let manifest = try String(contentsOf: ExerciseTests.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let list = try #require(manifest.firstMatch(of: /let lessons = \[([^\]]*)\]/)?.output.1)
        let names = list.matches(of: /"([0-9a-z-]+)"/).map { String($0.output.1) }
        #expect(names == LessonID.allCases.map(\.rawValue))
    }

    /// Each lesson's two variants are two files, and its exercise is made from the article's.
    @Test(arguments: LessonID.allCases)
    func eachLessonHasItsVariantsInTwoFiles(lesson: LessonID) throws {
        let folder = ExerciseTests.packageRoot.appendingPathComponent("Sources/\(lesson.executable)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.contains("Article.swift") && files.contains("Corrected.swift") && files.contains("main.swift"), "\(files)")
        #expect(Catalogue.lesson(lesson).id == lesson, "the catalogue's entry for \(lesson.executable) is another lesson's")
    }

    /// Every lesson has its exercise, its page, a row in the lessons' index and one in the
    /// README: each one missing is named.
    @Test(arguments: LessonID.allCases)
    func everyLessonIsWhereAReaderLooks(lesson: LessonID) throws {
        let root = ExerciseTests.packageRoot
        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path) }
        #expect(exists("Sources/Exercises/\(lesson.rawValue)/main.swift"),
                "no exercise: make Sources/Exercises/\(lesson.rawValue), then `lab exercise reset \(lesson.number)`")
        #expect(exists("Lessons/\(lesson.rawValue).md"), "no page Lessons/\(lesson.rawValue).md")
        let index = try String(contentsOf: root.appendingPathComponent("Lessons/README.md"), encoding: .utf8)
        #expect(index.contains("](\(lesson.rawValue).md)"), "Lessons/README.md has no row for \(lesson.rawValue)")
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("| `\(lesson.executable)` |"), "README.md has no row for \(lesson.executable)")
    }

    @Test func aLessonIsFoundByAnyOfItsNames() {
        for name in ["3", "03", "03-outputstream", "lesson-03-outputstream", "exercise-03-outputstream"] {
            #expect(LessonID(named: name) == .outputStream, "\(name)")
        }
        for name in ["", "10", "3-outputstream", "03-output", "lesson-lesson-03-outputstream"] {
            #expect(LessonID(named: name) == nil, "\(name)")
        }
    }

    /// A record written before a count existed reads it as 0, and a record reads back as written.
    @Test func aBackgroundRecordFromBeforeACountExistedReadsIt() throws {
        let old = try JSONDecoder().decode(BackgroundRecord.self, from: Data(#"{"life":"suspend@20%","handlersNeverCalled":1}"#.utf8))
        #expect(old.handlersNeverCalled == 1 && old.handlersBeforeTheEvents == 0 && old.life == "suspend@20%")
        var record = BackgroundRecord(life: "")
        record.handlersBeforeTheEvents = 2
        record.servicePeakRSSBytes = 1 << 20
        #expect(try JSONDecoder().decode(BackgroundRecord.self, from: JSONEncoder().encode(record)) == record)
    }
}
