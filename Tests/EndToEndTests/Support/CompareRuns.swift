import Foundation
import LabVocabulary
import Testing

/// `lab compare` with `arguments`, run for real into a fresh folder: the folder and the results
/// it wrote. A run that fails stops the test with its stderr.
func compareResults(_ arguments: [String], timeout: TimeInterval = 600) throws -> (folder: URL, results: ComparisonResults) {
    let folder = try scratchDirectory()
    let finished = try ChildProcess.run("lab", ["compare"] + arguments + ["-o", folder.path], timeout: timeout)
    try #require(finished.status == 0, "\(finished.stderr)")
    return (folder, try ComparisonResults.read(from: folder.appendingPathComponent("results.json")))
}

extension ComparisonResults {
    /// The run of `lesson`'s `variant` in `scenario`; the test stops when there is none.
    func run(_ lesson: LessonID, _ variant: Variant, _ scenario: Scenario) throws -> Run {
        try #require(runs.first { $0.lesson == lesson.rawValue && $0.variant == variant && $0.scenario == scenario },
                     "no \(lesson) \(variant) \(scenario) run")
    }
}
