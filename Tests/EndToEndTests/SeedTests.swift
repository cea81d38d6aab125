import Foundation
import LabCatalogue
import LabVocabulary
import Testing

/// A round of checks varies its trials by a seed: decided purely, the same on any machine, and
/// never changing what a trial means.
struct SeedTests {
    static let everyCheck = Catalogue.lessons.flatMap(\.checks)

    @Test func aSeedVariesEveryCheckTheSameWayEveryTime() {
        for check in Self.everyCheck {
            let once = check.trial.varied(by: CheckSeed(2718), for: check.id)
            let again = check.trial.varied(by: CheckSeed(2718), for: check.id)
            #expect(once.faults == again.faults && once.size == again.size, "\(check.id)")
        }
        // SplitMix64 over FNV-1a, not the standard library's generator: these numbers are the
        // same on a Mac. A change here changes what every printed seed replays.
        let statusIgnored = Trial(faults: "status:404", size: 1 << 20)
        #expect(statusIgnored.varied(by: CheckSeed(1), for: "status-ignored").faults.description == "status:410*8")
        #expect(statusIgnored.varied(by: CheckSeed(2), for: "status-ignored").faults.description == "status:400*8")
    }

    @Test func seedZeroPlaysTheTrialsAsDeclared() {
        for check in Self.everyCheck {
            let played = check.trial.varied(by: .declared, for: check.id)
            #expect(played.faults == check.trial.faults && played.size == check.trial.size, "\(check.id)")
        }
    }

    @Test func aVariedTrialKeepsItsMeaning() throws {
        for seed in (1...200).map(CheckSeed.init) {
            for check in Self.everyCheck {
                let varied = check.trial.varied(by: seed, for: check.id)
                #expect(varied.size >= check.trial.size && varied.size <= check.trial.size * 9 / 8, "\(check.id)")
                if check.trial.size % CheckSeed.sizeStep == 0 { #expect(varied.size % CheckSeed.sizeStep == 0) }
                // Only a status that ends the script lasts past it.
                let endsInAStatus = check.trial.faults.attempts.last?.contains(where: \.isStatus) == true
                let attempts = check.trial.faults.attempts.count
                #expect(varied.faults.attempts.count == (endsInAStatus ? max(attempts, CheckSeed.statusLasts) : attempts), "\(check.id)")
                #expect(varied.sequel == check.trial.sequel && varied.arguments == check.trial.arguments
                        && varied.generation == check.trial.generation, "\(check.id)")
                for (declared, played) in zip(check.trial.faults.attempts.joined(), varied.faults.attempts.joined()) {
                    switch (declared, played) {
                    case (.status(404), .status(let code)):
                        #expect(CheckSeed.errorStatuses.contains(code) && code != 404)
                    case (.drop(.percent(let before)), .drop(.percent(let after))), (.stall(.percent(let before), _), .stall(.percent(let after), _)):
                        #expect(abs(after - before) <= 10 && CheckSeed.breakBounds.contains(after), "\(check.id): \(before) → \(after)")
                    default:
                        #expect(declared == played, "\(check.id): \(declared) → \(played)")
                    }
                }
                #expect(varied.size <= Catalogue.largestTrialSize)
            }
        }
    }

    @Test func seedsPlayEveryStatusAndMoveTheBreaks() {
        let trial = Trial(faults: "drop:40pct,status:404", size: 4 << 20)
        let played = (1...64).map { trial.varied(by: CheckSeed($0), for: "a-check") }
        func status(_ trial: Trial) -> Int? {
            guard case .status(let code)? = trial.faults.attempts[1].first else { return nil }
            return code
        }
        let statuses = Set(played.compactMap(status))
        #expect(statuses == Set(CheckSeed.errorStatuses))
        let breaks = Set(played.compactMap { $0.faults.breakOffset(bodyLength: 100) })
        #expect(breaks == [30, 35, 40, 45, 50])
        let sizes: Set<Int64> = [4 << 20, (4 << 20) * 17 / 16, (4 << 20) * 18 / 16]
        #expect(Set(played.map(\.size)) == sizes)
    }

    /// `check` prints its seed, and `--seed` plays the same runs: the command that shows each
    /// check names the same faults and size.
    @Test func checkPrintsItsSeedAndTheSeedReplaysTheRuns() async throws {
        try await ExerciseTests.takingTurns {
            let first = try ExerciseTests.lab(["exercise", "check", "00", "--only", "status-ignored", "--seed", "77", "--json"])
            let again = try ExerciseTests.lab(["exercise", "check", "00", "--only", "status-ignored", "--seed", "77", "--json"])
            let commands = try [first, again].map { try ExerciseTests.records($0.stdout).first { $0.check == "status-ignored" }?.command }
            let played = try #require(commands[0])
            #expect(commands[1] == played)
            #expect(played.contains("--faults 'status:4") && played.contains("*8'") && !played.contains("status:404"), "\(played)")
            let shown = try ExerciseTests.lab(["exercise", "check", "00", "--only", "status-ignored"])
            let seed = try #require(shown.stdout.firstMatch(of: /seed (\d+) \(`--seed \1` plays these runs again\)/), "\(shown.stdout)")
            #expect(UInt32(seed.output.1) != nil)
        }
    }
}
