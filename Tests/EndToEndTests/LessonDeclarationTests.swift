import Foundation
import LabVocabulary
import TestFolders
import Testing

/// A lesson is declared once, in `LessonID.facts`, with nothing left to a default: a declaration
/// that leaves a fact out, or a new case without its facts, does not compile. Each test
/// type-checks a copy of LabVocabulary's sources with one throwaway change, as a new lesson's
/// author would make it, and reads the compiler's error.
@Suite(.serialized)
struct LessonDeclarationTests {
    /// Every fact of a throwaway lesson, in the order `LessonFacts` declares them.
    static let throwawayFacts = [
        #"caseName: "throwaway""#, #"title: "A throwaway lesson""#, #"shortTitle: "Throwaway""#, "kind: .download",
        "ways: nil", "defaultSize: 1 << 20", "defaultFaults: .none", "launches: 1", "resumption: .startsOver",
        "runsOnThePhone: false", "fetchesInSegments: false", "timedAtEverySize: true",
    ]

    /// LabVocabulary's sources, copied, with `extra` as one more file of the module: swiftc's
    /// status and what it said.
    static func typeCheck(adding extra: String, editing edit: (String) -> String = { $0 }) throws -> (status: Int32, output: String) {
        let copy = try TestFolders.scratch("lesson-declaration")
        let sources = ExerciseTests.packageRoot.appendingPathComponent("Sources/LabVocabulary")
        var files: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() where name.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(name), encoding: .utf8)
            let file = copy.appendingPathComponent(name)
            try (name == "LessonID.swift" ? edit(text) : text).write(to: file, atomically: true, encoding: .utf8)
            files.append(file.path)
        }
        let extraFile = copy.appendingPathComponent("Throwaway.swift")
        try extra.write(to: extraFile, atomically: true, encoding: .utf8)
        let checked = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"),
                                                  ["swiftc", "-typecheck", "-swift-version", "6", "-module-name", "LabVocabulary", "-package-name", "DownloadLab"]
                                                  + files + [extraFile.path])
        return (checked.status, checked.stdout + checked.stderr)
    }

    static func declaration(_ facts: [String], named name: String = "throwaway") -> String {
        "let \(name) = LessonFacts(\(facts.joined(separator: ", ")))\n"
    }

    /// The control: every fact given, the copy type-checks, so the failures below are the
    /// missing fact's alone.
    @Test func aLessonWithEveryFactCompiles() throws {
        let checked = try Self.typeCheck(adding: Self.declaration(Self.throwawayFacts))
        #expect(checked.status == 0, "\(checked.output.suffix(2000))")
    }

    /// Three declarations, each without another fact, in one file: the compiler names each one.
    @Test func aLessonWithoutOneFactDoesNotCompile() throws {
        let leftOut = [Self.throwawayFacts.count - 1, 4, 6]
        let declarations = leftOut.map { left in
            var facts = Self.throwawayFacts
            facts.remove(at: left)
            return Self.declaration(facts, named: "without\(left)")
        }
        let checked = try Self.typeCheck(adding: declarations.joined())
        #expect(checked.status != 0, "LessonFacts with facts left out compiled")
        for left in leftOut {
            let name = String(Self.throwawayFacts[left].prefix { $0 != ":" })
            #expect(checked.output.contains("missing argument for parameter '\(name)'"), "\(name): \(checked.output.suffix(2000))")
        }
    }

    /// A twelfth-plus-one case with no facts: the compiler names the switch that lacks it.
    @Test func aNewLessonWithoutItsFactsDoesNotCompile() throws {
        let checked = try Self.typeCheck(adding: "") { text in
            text.replacingOccurrences(of: #"    case segmented = "11-segmented""#,
                                      with: "    case segmented = \"11-segmented\"\n    case throwaway = \"12-throwaway\"")
        }
        #expect(checked.status != 0, "a case without facts compiled")
        #expect(checked.output.contains("switch must be exhaustive") && checked.output.contains("LessonID.swift"),
                "\(checked.output.suffix(2000))")
    }
}
