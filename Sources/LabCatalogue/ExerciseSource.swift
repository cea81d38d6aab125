import Foundation
import LabVocabulary

/// The starting code of an exercise, made from its lesson's folder, so that it can never drift
/// from the article variant. The exercise gets:
///
/// - `Article.swift`: the lesson's `Article.swift` under the exercise's header. This is the
///   student's file; apart from the header it is the lesson's file, line for line.
/// - `main.swift`: the lesson's wiring (its imports and its `Lesson(…).run`) with the article's
///   case only, run as the exercise (`program: .exercise`).
/// - every other file at the top of the lesson's folder except `Corrected.swift`: what both
///   variants use, copied under a line that says where from. Demonstrations live in a subfolder
///   of the lesson and are not copied.
public enum ExerciseSource {
    public struct File: Equatable, Sendable {
        public let name: String
        public let text: String
    }

    public enum Problem: Error, CustomStringConvertible {
        case missing(String)
        case noRunClosure, noArticleCase

        public var description: String {
            switch self {
            case .missing(let name): "the lesson has no \(name)"
            case .noRunClosure: "main.swift has no `Lesson(…).run { run in` (or `{ run, way in`) line closed by a `}` line"
            case .noArticleCase: "main.swift's run closure has no `case .article:` line"
            }
        }
    }

    public static let studentFile = "Article.swift"
    static let correctedFile = "Corrected.swift"
    static let wiringFile = "main.swift"

    /// `lessonFiles`: the text of each Swift file at the top of the lesson's folder, by name.
    public static func files(for lesson: LessonDefects, lessonFiles: [String: String]) throws -> [File] {
        guard let article = lessonFiles[studentFile] else { throw Problem.missing(studentFile) }
        guard let wiring = lessonFiles[wiringFile] else { throw Problem.missing(wiringFile) }
        let shared = lessonFiles.keys.filter { ![studentFile, correctedFile, wiringFile].contains($0) }.sorted()
        return [
            File(name: studentFile, text: lines(header(for: lesson)) + withoutHeader(article)),
            File(name: wiringFile, text: try exerciseWiring(for: lesson, from: wiring)),
        ] + shared.map { name in
            File(name: name, text: lines(["/// Copied from \(lessonFolder(for: lesson))/\(name) by `lab exercise reset`: what both",
                                          "/// variants use. Your code is in \(studentFile)."])
                 + withoutHeader(lessonFiles[name]!))
        }
    }

    /// The wiring runs the article's case only, as the exercise.
    static func exerciseWiring(for lesson: LessonDefects, from wiring: String) throws -> String {
        let source = withoutHeader(wiring).components(separatedBy: "\n")
        guard let opening = source.firstIndex(where: { $0.hasPrefix("Lesson(") && $0.contains(").run { ") && $0.hasSuffix(" in") }),
              let closing = source[opening...].firstIndex(of: "}")
        else { throw Problem.noRunClosure }
        guard let articleCase = source[opening..<closing].first(where: { $0.contains("case .article:") }) else {
            throw Problem.noArticleCase
        }
        var expression = articleCase.components(separatedBy: "case .article:")[1].trimmingCharacters(in: .whitespaces)
        if expression.hasPrefix("return ") { expression.removeFirst("return ".count) }
        // "Lesson(.x, ways: W.self).run { run, way in": the part before ").run { ", and the parameters.
        let declaration = source[opening].components(separatedBy: ").run { ")[0]
        let parameters = source[opening].dropFirst(declaration.count + ").run { ".count)
        return lines([
            "/// Exercise \(lesson.number): runs your \(studentFile) as `exercise-\(lesson.lesson)`. Made by `lab exercise reset`.",
        ] + source[..<opening].filter { $0.hasPrefix("import ") } + [
            "",
            declaration + ", program: .exercise).run { " + parameters,
            "    \(expression)",
            "}",
        ])
    }

    static func header(for lesson: LessonDefects) -> [String] {
        [
            "/// Exercise \(lesson.number): the article's code from \(lessonFolder(for: lesson))/\(studentFile), with",
            "/// its defects. Fix them here; the lesson itself never changes.",
            "///",
            "///     swift run lab exercise check \(lesson.number)   build this and run it against the lab server",
            "///     swift run lab exercise hint \(lesson.number)    a hint for the first check that fails",
            "///     swift run lab exercise watch \(lesson.number)   check again on every save",
            "///     swift run lab exercise reset \(lesson.number)   back to this starting code",
            "///",
            "/// Read Lessons/\(lesson.lesson).md next to this file. This file was made by `lab exercise reset`.",
        ]
    }

    /// A file's text after its leading `///` comment: what an exercise copies.
    public static func withoutHeader(_ text: String) -> String {
        var lines = text.components(separatedBy: "\n")
        while lines.first?.hasPrefix("///") == true { lines.removeFirst() }
        return lines.joined(separator: "\n")
    }

    private static func lines(_ lines: [String]) -> String { lines.joined(separator: "\n") + "\n" }

    /// The exercise's folder, from the package's folder.
    public static func folder(for lesson: LessonDefects) -> String { "Sources/Exercises/\(lesson.lesson)" }
    /// The student's file, from the package's folder.
    public static func path(for lesson: LessonDefects) -> String { "\(folder(for: lesson))/\(studentFile)" }
    public static func lessonFolder(for lesson: LessonDefects) -> String { "Sources/\(lesson.lessonExecutable)" }
}
