import Foundation
import LabCatalogue
import LabVocabulary
import Testing

/// Lesson 05 presses Pause itself. A Pause that lands after the body's end hands back no resume
/// data, and on Linux how late a cancel lands depends on the machine's load: a check whose
/// first transfer could end before its Pause would judge the machine, not the code. So every
/// check of lesson 05 that kills its run or changes its file holds its first transfer at a
/// stall past the Pause, whatever the seed, and the kill waits for the script's last stall.
struct PauseTrialTests {
    /// The fraction of the file at which the lesson presses Pause, from its Shared.swift.
    static func pausePressedAt() throws -> Double {
        let shared = try String(contentsOf: ExerciseTests.packageRoot
            .appendingPathComponent("Sources/\(LessonID.downloadTaskResume.executable)/Shared.swift"), encoding: .utf8)
        return try #require(shared.firstMatch(of: /pausePressedAt = ([0-9.]+)/).flatMap { Double($0.output.1) })
    }

    @Test func lesson05sFirstTransferHoldsPastItsPause() throws {
        let pause = try Self.pausePressedAt()
        let lesson = Catalogue.lesson(.downloadTaskResume)
        let chosen = lesson.checks.filter { $0.trial.sequel.kills || $0.trial.faults.attempts.joined().contains(.change) }
        #expect(chosen.count == 4, "\(chosen.map(\.id))")
        for seed in (1...200).map({ CheckSeed(UInt32($0)) }) + [.declared] {
            for check in chosen.map({ $0.varied(by: seed) }) {
                let size = check.trial.size
                let first = check.trial.faults.faults(forAttempt: 1)
                let heldAt = first.compactMap { fault -> Int64? in
                    if case .stall(let offset, nil) = fault { offset.resolved(bodyLength: size) } else { nil }
                }.first
                let held = try #require(heldAt, "\(check.id) at \(seed): the first transfer is not held (\(check.trial.faults))")
                #expect(Double(held) > pause * Double(size), "\(check.id) at \(seed): held at \(held) of \(size), before the Pause")
                if check.trial.sequel.kills {
                    #expect(check.trial.faults.stallToKillAt == 2, "\(check.id): killed at \(String(describing: check.trial.faults.stallToKillAt))")
                }
            }
        }
    }

    /// The kill's stall is the last held one, or the first of a row of identical ones (the
    /// ranges of one download, side by side); a stall with a duration lets the body go on.
    @Test(arguments: [
        ("stall:55pct,stall:512KiB", 2), ("stall:50pct", 1), ("ok,stall:1MiB", 2), ("stall:1MiB,stall:2MiB:3s", 1),
        ("drop:30pct,ok", nil), ("", nil), ("ok,stall:1MiB,ok,ok", 2), ("stall:60pct*4", 1), ("ok,stall:1MiB*3", 2),
        ("stall:60pct+throttle:2MiB*4", 1), ("stall:50pct,stall:50pct,ok,stall:1MiB", 4),
    ] as [(String, Int?)])
    func theKillsStallIsTheLastHeldOne(script: String, attempt: Int?) throws {
        #expect(try FaultScript(parsing: script).stallToKillAt == attempt)
    }
}
