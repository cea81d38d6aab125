import Foundation

/// The starting code of an exercise, made from its lesson's `main.swift`, so that it can never
/// drift from the article variant:
///
/// - the lesson's doc comment gives way to the exercise's instructions;
/// - the `.run { run in … }` closure keeps only what its `case .article:` line returns;
/// - every `// MARK: -` section whose title names "the corrected version" is left out, and so is
///   everything the lesson keeps in its other files (demonstrations).
///
/// The rest (imports, the `Lesson(…)` call, the article's code and what it shares with the
/// corrected one) is copied line for line.
public enum ExerciseSource {
    public enum Problem: Error, CustomStringConvertible {
        case noRunClosure, noArticleCase

        public var description: String {
            switch self {
            case .noRunClosure: "the lesson has no `).run { run in` line closed by a `}` line"
            case .noArticleCase: "the lesson's run closure has no `case .article:` line"
            }
        }
    }

    public static func startingCode(for lesson: LessonDefects, fromLessonSource source: String) throws -> String {
        var lines = source.components(separatedBy: "\n")
        while lines.first?.hasPrefix("///") == true { lines.removeFirst() }

        guard let opening = lines.firstIndex(where: { $0.hasPrefix(").run { run in") }),
              let closing = lines[opening...].firstIndex(of: "}")
        else { throw Problem.noRunClosure }
        guard let articleCase = lines[opening..<closing].first(where: { $0.contains("case .article:") }) else {
            throw Problem.noArticleCase
        }
        var expression = articleCase.components(separatedBy: "case .article:")[1].trimmingCharacters(in: .whitespaces)
        if expression.hasPrefix("return ") { expression.removeFirst("return ".count) }
        lines.replaceSubrange(opening...closing, with: [").run { run in", "    \(expression)", "}"])

        var kept: [String] = []
        var skipping = false
        for line in lines {
            if line.hasPrefix("// MARK: - ") { skipping = line.lowercased().contains("corrected version") }
            if !skipping { kept.append(line) }
        }
        while kept.last?.isEmpty == true { kept.removeLast() }
        return header(for: lesson).joined(separator: "\n") + "\n" + kept.joined(separator: "\n") + "\n"
    }

    static func header(for lesson: LessonDefects) -> [String] {
        [
            "/// Exercise \(lesson.number): the article's code from Sources/\(lesson.lessonExecutable)/main.swift, with",
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

    /// Where the student's file is, from the package's folder.
    public static func path(for lesson: LessonDefects) -> String { "Sources/Exercises/\(lesson.lesson)/main.swift" }
    public static func lessonPath(for lesson: LessonDefects) -> String { "Sources/\(lesson.lessonExecutable)/main.swift" }
}
