import Foundation
import LabVocabulary
import TestFolders
import Testing

/// `.ci/labkit-names`, run as CI runs it: it lists what each lesson's Corrected.swift takes from
/// LabKit, by kind, and fails, with file:line, on a name of LabKit's own planted in one.
struct LabKitNamesCheckTests {
    static let script = PortabilityCheckTests.packageRoot.appendingPathComponent(".ci/labkit-names")

    @Test func everyCorrectedVariantTakesOnlyWhatAnAppHas() throws {
        let (status, output) = try Self.check([])
        #expect(status == 0, "\(output)")
        for lesson in LessonID.allCases {
            #expect(output.contains("\(lesson.executable)\n  "), "\(lesson.executable) is not listed: \(output)")
        }
        #expect(output.contains("\n  the resume rules: PartialFile\n"), "\(output)")
        #expect(output.contains("lesson-03-outputstream\n  NSURLConnection's work-alike: URLConnectionDataDelegate, URLConnection\n"
                                + "  the resume rules: ResumeState, ResumeRules\n"), "\(output)")
    }

    @Test func aPlantedLabKitNameFailsWithItsPlace() throws {
        let folder = TestFolders.root.appendingPathComponent("labkit-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let lesson = PortabilityCheckTests.packageRoot.appendingPathComponent("Sources/lesson-03-outputstream/Corrected.swift")
        let finished = "        finish(.finished)\n"
        let text = try String(contentsOf: lesson, encoding: .utf8)
        let at = try #require(text.range(of: finished))
        let plantedLine = text[..<at.lowerBound].filter { $0 == "\n" }.count + 1
        let planted = text.replacingCharacters(in: at, with: "        run.log(ByteFormat.iec(1))\n        run.console.line(\"\")\n" + finished)
        let file = folder.appendingPathComponent("lesson-03-outputstream/Corrected.swift")
        try PortabilityCheckTests.write(planted, to: folder, "lesson-03-outputstream/Corrected.swift")

        let (status, output) = try Self.check([file.path])
        #expect(status == 1, "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains("\(file.path):\(plantedLine): ByteFormat is LabKit's own: an app would not have it"), "\(output)")
        #expect(lines.contains("\(file.path):\(plantedLine + 1): run.console is not one of the run's handles: an app would not have it"),
                "\(output)")
        #expect(lines.contains("  the resume rules: ResumeState, ResumeRules"), "what it found is still listed: \(output)")
    }

    /// A variant that imports what runs it fails, named with its place; so does its Article.swift.
    @Test func aVariantThatImportsTheHarnessFails() throws {
        let folder = TestFolders.root.appendingPathComponent("labkit-names-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let lesson = PortabilityCheckTests.packageRoot.appendingPathComponent("Sources/lesson-03-outputstream")
        for name in ["Corrected.swift", "Article.swift"] {
            let text = try String(contentsOf: lesson.appendingPathComponent(name), encoding: .utf8)
            let planted = name == "Corrected.swift" ? "import LabHarness\n" : "@preconcurrency import LabPhone\n"
            try PortabilityCheckTests.write(text.replacingOccurrences(of: "import LabKit\n", with: "import LabKit\n" + planted),
                                            to: folder, "lesson-03-outputstream/\(name)")
        }
        let file = folder.appendingPathComponent("lesson-03-outputstream/Corrected.swift").path
        let (status, output) = try Self.check([file])
        #expect(status == 1, "\(output)")
        #expect(output.contains(": imports LabHarness: a variant imports LabKit alone; what runs it is main.swift's"), "\(output)")
        #expect(output.contains("lesson-03-outputstream/Article.swift:"), "\(output)")
        #expect(output.contains(": imports LabPhone: a variant imports LabKit alone"), "\(output)")
    }

    static func check(_ files: [String]) throws -> (Int32, String) { try PortabilityCheckTests.run(script, files) }
}
