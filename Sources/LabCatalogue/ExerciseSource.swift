import Foundation
import LabVocabulary

/// The starting code of an exercise, made from its lesson's folder, so that it can never drift
/// from the article variant. The exercise gets:
///
/// - `Article.swift`: the lesson's `Article.swift` under the exercise's header, without the
///   lesson's `// Defect:` and `// Weakness:` comments: the code is there to be read, not its
///   answer key. This is the student's file.
/// - `main.swift`: runs the article's variant (`articleVariant`) as the exercise
///   (`program: .exercise`), made from the lesson's `LessonID` (`exerciseWiring`).
/// - every other file at the top of the lesson's folder except `Corrected.swift` and its
///   continuations (`Corrected+Plan.swift`), which are the fix's: what both
///   variants use, copied under a line that says where from. Demonstrations live in a subfolder
///   of the lesson and are not copied.
public enum ExerciseSource {
    public struct File: Equatable, Sendable {
        public let name: String
        public let text: String
    }

    public enum Problem: Error, CustomStringConvertible {
        case missing(String)
        case noEntry

        public var description: String {
            switch self {
            case .missing(let name): "the lesson has no \(name)"
            case .noEntry: "\(studentFile) declares no `func \(articleEntry)(_ run: LessonRun…)`, which the exercise's main.swift calls"
            }
        }
    }

    public static let studentFile = "Article.swift"
    static let correctedFile = "Corrected.swift"
    static let wiringFile = "main.swift"
    /// The function in a lesson's `Article.swift` that makes the article's variant for a run.
    public static let articleEntry = "articleVariant"

    /// `lessonFiles`: the text of each Swift file at the top of the lesson's folder, by name.
    public static func files(for lesson: LessonDefects, lessonFiles: [String: String]) throws -> [File] {
        guard let article = lessonFiles[studentFile] else { throw Problem.missing(studentFile) }
        guard article.contains("func \(articleEntry)(") else { throw Problem.noEntry }
        let shared = lessonFiles.keys.filter { ![studentFile, correctedFile, wiringFile].contains($0) && !$0.hasPrefix("Corrected+") }.sorted()
        return [
            File(name: studentFile, text: lines(header(for: lesson)) + withoutAnnotations(withoutHeader(article))),
            File(name: wiringFile, text: exerciseWiring(for: lesson.id)),
        ] + shared.map { name in
            File(name: name, text: lines(["/// Copied from \(lessonFolder(for: lesson))/\(name) by `lab exercise reset`: what both",
                                          "/// variants use. Your code is in \(studentFile)."])
                 + withoutHeader(lessonFiles[name]!))
        }
    }

    /// The exercise's `main.swift`, made from the lesson's declaration alone: its `LessonID`, the
    /// enum of its ways, and whether the article's variant is handed one. The lesson's own
    /// `main.swift` is not read: what it runs besides the article (a demonstration) is not the
    /// exercise's.
    static func exerciseWiring(for id: LessonID) -> String {
        var imports = ["import EmbeddedServer", "import LabHarness"]
        let start: String
        if let ways = id.ways {
            imports.append("import LabVocabulary")
            let handed = ways.variants.contains(.article) ? "(\(articleEntry))" : " { run, _ in \(articleEntry)(run) }"
            start = "Lesson(.\(id.caseName), ways: \(ways).self, program: .exercise).run" + handed
        } else {
            start = "Lesson(.\(id.caseName), program: .exercise).run(\(articleEntry))"
        }
        return lines(["/// Exercise \(id.number): runs your \(studentFile) as `\(id.exerciseExecutable)`. Made by `lab exercise reset`."]
                     + imports + ["", start])
    }

    /// What decides the exit status: what an attempt returns, or for lesson 09, whose app returns
    /// nothing, what the phone sees of its life.
    static func howItEnds(_ lesson: LessonDefects) -> [String] {
        guard !lesson.id.runsOnThePhone else {
            return [
                "/// How the program ends is checked too. The phone around your app judges it from outside:",
                "/// the file the app moved, the transfer service's tasks, the completion handler it was given.",
                "///     no file when the app's life is over, and no attempt left                 exit 69",
                "///     a completion handler or a data task given to a background session       exit 70",
                "///     a file called done that is not the server's                               exit 65",
            ]
        }
        return [
            "/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`",
            "/// and the lab gives the lesson's exit status and a one-line message:",
            "///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69",
            "///     .localIO (a write failed: the disk is full)                               exit 74",
            "///     a file called done that is not the server's                               exit 65",
        ]
    }

    /// "What LabKit gives the fix", when the catalogue names it.
    static func tools(_ lesson: LessonDefects) -> [String] {
        guard !lesson.tools.isEmpty else { return [] }
        return ["///", "/// What LabKit gives the fix (Lessons/\(lesson.id.rawValue).md has them with more words):"]
            + lesson.tools.map { "///     " + $0 }
    }

    static func header(for lesson: LessonDefects) -> [String] {
        [
            "/// Exercise \(lesson.id.number): the article's code from \(lessonFolder(for: lesson))/\(studentFile), with",
            "/// its defects. Fix them here; the lesson itself never changes.",
            "///",
            "///     swift run lab exercise check \(lesson.id.number)   build this and run it against the lab server",
            "///     swift run lab exercise hint \(lesson.id.number)    a hint for the first check that fails (or: hint \(lesson.id.number) <check>)",
            "///     swift run lab exercise watch \(lesson.id.number)   check again on every save",
            "///     swift run lab exercise reset \(lesson.id.number)   back to this starting code",
            "///",
        ] + howItEnds(lesson) + tools(lesson) + [
            "///",
            "/// Swift 6 checks data races. A completion handler or a delegate callback runs on another",
            "/// thread, so the compiler refuses a plain `var` that it changes. The lessons keep such state",
            "/// in a Mutex (`import Synchronization`), which locks every read and write:",
            "///     let received = Mutex<Data?>(nil)",
            "///     session.dataTask(with: request) { data, _, _ in received.withLock { $0 = data } }.resume()",
            "///     ... later: let data = received.withLock { $0 }",
            "/// A delegate whose callbacks all run one at a time on its session's serial delegate queue",
            "/// may say so instead: `@unchecked Sendable`, with a comment why (lessons 04 and 05).",
            "///",
            "/// Read Lessons/\(lesson.id.rawValue).md next to this file. This file was made by `lab exercise reset`.",
        ]
    }

    /// The comments that name what is wrong, each from its `Defect:` or `Weakness:` line to the
    /// end of that comment: the lesson keeps them, the exercise leaves them for the student to find.
    public static func withoutAnnotations(_ text: String) -> String {
        var kept: [String] = []
        var annotationPrefix: String?
        for line in text.components(separatedBy: "\n") {
            let indent = String(line.prefix { $0 == " " })
            let rest = line.dropFirst(indent.count)
            let slashes = String(rest.prefix { $0 == "/" })
            let comment = rest.dropFirst(slashes.count).trimmingPrefix(" ")
            // The comment goes on at the same indent with the same slashes.
            if let prefix = annotationPrefix, !slashes.isEmpty, indent + slashes == prefix { continue }
            annotationPrefix = nil
            if !slashes.isEmpty, annotationMarkers.contains(where: { comment.hasPrefix($0) }) {
                annotationPrefix = indent + slashes
                continue
            }
            kept.append(line)
        }
        return kept.joined(separator: "\n")
    }

    /// How the lessons' `Article.swift` marks what is wrong.
    public static let annotationMarkers = ["Defect:", "Weakness:"]

    /// A file's text after its leading `///` comment: what an exercise copies.
    public static func withoutHeader(_ text: String) -> String {
        var lines = text.components(separatedBy: "\n")
        while lines.first?.hasPrefix("///") == true { lines.removeFirst() }
        return lines.joined(separator: "\n")
    }

    private static func lines(_ lines: [String]) -> String { lines.joined(separator: "\n") + "\n" }

    /// The exercise's folder, from the package's folder.
    public static func folder(for lesson: LessonDefects) -> String { "Sources/Exercises/\(lesson.id.rawValue)" }
    /// The student's file, from the package's folder.
    public static func path(for lesson: LessonDefects) -> String { "\(folder(for: lesson))/\(studentFile)" }
    public static func lessonFolder(for lesson: LessonDefects) -> String { "Sources/\(lesson.id.executable)" }
}
