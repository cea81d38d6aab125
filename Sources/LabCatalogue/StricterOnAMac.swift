import Foundation
import LabVocabulary

/// The Foundation calls a student may write whose declaration in Apple's SDK is stricter than in
/// Foundation on Linux, so that code which builds here can fail to build on a Mac. Of the calls
/// the lessons make, one: the rest were read and found alike (docs/architecture.md, the platform
/// seam). The checker names each use it finds when it builds on Linux, one line each; a Mac's
/// compiler reads Apple's declaration itself.
public enum StricterOnAMac {
    public struct Call: Sendable {
        /// As people name it: "cancel(byProducingResumeData:)".
        public let name: String
        /// Where a student's code calls it: the labelled form and the trailing-closure form.
        let pattern: String
        /// What Apple's declaration asks that Linux's does not, and where Apple says so.
        let difference: String
        /// Lessons whose calls reach a declaration of the lab's own, strict on every system.
        let strictHereIn: Set<LessonID>
    }

    public static let calls = [
        Call(name: "cancel(byProducingResumeData:)", pattern: #"\.cancel\s*(\(\s*byProducingResumeData\s*:|\{)"#,
             difference: "its handler is @Sendable in Apple's NSURLSession.h and not in Foundation on Linux, so a handler that "
                 + "changes captured state outside a Mutex builds here and not there",
             strictHereIn: [.backgroundSession]),
    ]

    /// One line for each use of such a call in `code` (the file `path` of `lesson`'s exercise):
    /// "Sources/…/Article.swift:71: on a Mac, cancel(byProducingResumeData:): …".
    public static func notes(in code: String, path: String, lesson: LessonID) -> [String] {
        let lines = code.split(separator: "\n", omittingEmptySubsequences: false)
        var notes: [String] = []
        for call in calls where !call.strictHereIn.contains(lesson) {
            for (index, line) in lines.enumerated() where line.range(of: call.pattern, options: .regularExpression) != nil {
                guard !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") else { continue }
                notes.append("\(path):\(index + 1): on a Mac, \(call.name): \(call.difference)")
            }
        }
        return notes
    }
}
