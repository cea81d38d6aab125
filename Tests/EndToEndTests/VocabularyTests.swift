import Foundation
import LabCatalogue
import LabVocabulary
import TestFolders
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
        #expect(exists(lesson.page), "no page \(lesson.page)")
        #expect(exists(lesson.playground + "/Contents.swift"), "no playground \(lesson.playground)")
        let index = try String(contentsOf: root.appendingPathComponent("Lessons/README.md"), encoding: .utf8)
        #expect(index.contains("](\(lesson.rawValue).md)"), "Lessons/README.md has no row for \(lesson.rawValue)")
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("| `\(lesson.executable)` |"), "README.md has no row for \(lesson.executable)")
    }

    /// A new lesson's folder builds before its exercise exists: the manifest makes an exercise's
    /// target only once `lab exercise reset` has made its folder.
    @Test func theManifestLeavesOutAnExerciseWithoutItsFolder() throws {
        let copy = try TestFolders.scratch("manifest")
        try FileManager.default.copyItem(at: ExerciseTests.packageRoot.appendingPathComponent("Package.swift"),
                                        to: copy.appendingPathComponent("Package.swift"))
        let missing = LessonID.outputStream
        for lesson in LessonID.allCases where lesson != missing {
            let folder = copy.appendingPathComponent("Sources/Exercises/\(lesson.rawValue)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data().write(to: folder.appendingPathComponent("main.swift"))
        }
        let dumped = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"),
                                                 ["swift", "package", "--package-path", copy.path, "dump-package", "--manifest-cache", "none"])
        #expect(dumped.status == 0, "\(dumped.stderr)")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(dumped.stdout.utf8)) as? [String: Any])
        let targets = Set(try #require(manifest["targets"] as? [[String: Any]]).compactMap { $0["name"] as? String })
        for lesson in LessonID.allCases {
            #expect(targets.contains(lesson.executable))
            #expect(targets.contains(lesson.exerciseExecutable) == (lesson != missing), "\(lesson.exerciseExecutable)")
        }
    }

    /// The exercise's main.swift is made from the lesson's declaration, and runs the function its
    /// Article.swift declares.
    @Test func anExerciseRunsTheArticlesDeclaredEntry() throws {
        let wiring = { (lesson: LessonID) throws -> String in
            try #require(try ExerciseTests.startingFiles(Catalogue.lesson(lesson)).first { $0.name == "main.swift" }).text
        }
        #expect(try wiring(.outputStream).hasSuffix("\nLesson(.outputStream, program: .exercise).run(articleVariant)\n"))
        #expect(try wiring(.smallFile).hasSuffix("\nLesson(.smallFile, ways: SmallFileWay.self, program: .exercise).run(articleVariant)\n"))
        // Lesson 07 shows its ways in the corrected variant only.
        #expect(try wiring(.multipartUpload).contains(".run { run, _ in articleVariant(run) }"))
        var files = try #require(try? String(contentsOf: ExerciseTests.packageRoot.appendingPathComponent("Sources/lesson-03-outputstream/Article.swift"),
                                                encoding: .utf8))
        files = files.replacingOccurrences(of: "func articleVariant(", with: "func startArticle(")
        #expect(throws: ExerciseSource.Problem.self) {
            try ExerciseSource.files(for: Catalogue.lesson(.outputStream), lessonFiles: ["Article.swift": files, "main.swift": ""])
        }
    }

    @Test func aLessonIsFoundByAnyOfItsNames() {
        for name in ["3", "03", "03-outputstream", "lesson-03-outputstream", "exercise-03-outputstream"] {
            #expect(LessonID(named: name) == .outputStream, "\(name)")
        }
        for name in ["", "99", "3-outputstream", "03-output", "lesson-lesson-03-outputstream"] {
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
