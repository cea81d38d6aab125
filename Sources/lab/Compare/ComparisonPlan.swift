import Foundation
import LabCatalogue
import LabKit
import LabServer

/// A lesson as `lab compare` runs it.
struct LessonProfile: Sendable {
    /// "03-outputstream": the executable is `lesson-<id>` and the page `Lessons/<id>.md`.
    let id: String
    let title: String
    /// The lesson sends the file (POST /upload) instead of fetching it; it runs only clean.
    var uploads = false
    /// Arguments that pick the download itself out of a lesson whose default run also tells
    /// side stories (lesson 06's demonstrations take seconds and would swamp its numbers).
    var arguments: [String] = []
    /// The corrected variant refuses a file bigger than this, on purpose (lesson 00).
    var correctedRefusesAbove: Int64?

    var executable: String { "lesson-\(id)" }

    /// A scenario made for one lesson (crowded) runs only for the lesson whose defect it shows.
    func runs(_ scenario: Scenario) -> Bool {
        !scenario.isLessonSpecific || Catalogue.lesson(named: id)?.failingScenarios.contains(scenario) == true
    }

    static let all: [LessonProfile] = [
        LessonProfile(id: "00-small-file", title: "Small file, completion handler",
                      correctedRefusesAbove: 64 << 20),
        LessonProfile(id: "01-in-memory", title: "In-memory buffer (NSMutableData)"),
        LessonProfile(id: "02-filehandle", title: "FileHandle seek and append"),
        LessonProfile(id: "03-outputstream", title: "OutputStream append"),
        LessonProfile(id: "04-session-data-task", title: "URLSession data task"),
        LessonProfile(id: "05-download-task-resume", title: "Download task with resume data"),
        LessonProfile(id: "06-runloop-thread", title: "Connection on a run-loop thread",
                      arguments: ["--way", "run-loop"]),
        LessonProfile(id: "07-multipart-upload", title: "Multipart upload", uploads: true),
    ]

    /// Accepts "03", "03-outputstream" or "lesson-03-outputstream".
    static func named(_ name: String) -> LessonProfile? {
        let bare = name.hasPrefix("lesson-") ? String(name.dropFirst("lesson-".count)) : name
        return all.first { $0.id == bare || $0.id.hasPrefix(bare + "-") }
    }
}

/// Sizes, lessons, scenarios and repetitions of one comparison.
struct ComparisonPlan {
    var preset: String
    var sizes: [Int64]
    var faultSize: Int64
    var lessons: [LessonProfile]
    var variants: [Variant]
    var scenarios: [Scenario]
    var repetitions: Int

    static let defaultPlan = ComparisonPlan(
        preset: "default", sizes: [1 << 20, 32 << 20, 128 << 20], faultSize: 16 << 20,
        lessons: LessonProfile.all, variants: Variant.allCases, scenarios: Scenario.allCases, repetitions: 3)

    static let quick = ComparisonPlan(
        preset: "quick", sizes: [1 << 20, 32 << 20], faultSize: 8 << 20,
        lessons: LessonProfile.all, variants: Variant.allCases,
        scenarios: [.clean, .dropResume, .ignoreRange], repetitions: 1)

    static let full = ComparisonPlan(
        preset: "full", sizes: [1 << 20, 32 << 20, 256 << 20, 1 << 30], faultSize: 64 << 20,
        lessons: LessonProfile.all, variants: Variant.allCases, scenarios: Scenario.allCases, repetitions: 3)

    /// The runs in the order they happen: every clean size first, smallest first, so the
    /// first results arrive quickly; then the fault scenarios at `faultSize`.
    var cases: [RunCase] {
        var cases: [RunCase] = []
        if scenarios.contains(.clean) {
            for size in sizes {
                for lesson in lessons {
                    for variant in variants {
                        cases.append(RunCase(lesson: lesson, variant: variant, scenario: .clean, size: size))
                    }
                }
            }
        }
        for scenario in scenarios where scenario != .clean {
            for lesson in lessons where !lesson.uploads && lesson.runs(scenario) {
                for variant in variants {
                    cases.append(RunCase(lesson: lesson, variant: variant, scenario: scenario, size: faultSize))
                }
            }
        }
        return cases
    }
}

/// One lesson, variant, scenario and size; run `repetitions` times.
struct RunCase {
    let lesson: LessonProfile
    let variant: Variant
    let scenario: Scenario
    let size: Int64

    /// Lesson 00 corrected declines a file this big, and that is the right answer.
    var expectsRefusal: Bool {
        guard variant == .corrected, let limit = lesson.correctedRefusesAbove else { return false }
        return size > limit
    }
}
