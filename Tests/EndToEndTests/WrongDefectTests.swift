import Foundation
import LabCatalogue
import LabVocabulary
import Testing

/// A check names its defect only when the run shows that defect's cause: code that fails the way
/// a defect would, for another reason, is told it "fails", and why, not that the defect is
/// "still there".
struct WrongDefectTests {
    /// The file in Application Support, its validators in Caches: the purge takes them, and the
    /// second launch downloads the file again. The file was never in Caches.
    @Test func aFileInApplicationSupportIsNotThePurgedHomeDefect() async throws {
        let records = try await ExerciseTests.takingTurns {
            try ExerciseTests.checkCorrected("10", replacing: "validatorsFile = folder.appendingPathComponent(file.lastPathComponent + \".validators\")",
                                             with: "validatorsFile = run.containerURL(for: .cachesDirectory).appendingPathComponent(file.lastPathComponent + \".validators\")")
        }
        let purged = try #require(records.first { $0.check == "purged-home" })
        #expect(purged.status == .fails && !purged.passed, "\(purged.status)")
        #expect(purged.detail.hasPrefix("not this defect: the file was kept in Library/Application Support, not in Library/Caches or tmp"),
                "\(purged.detail)")
        // The starting code keeps its file in Caches: there the defect is named.
        let starting = try await ExerciseTests.takingTurns {
            try ExerciseTests.records(try ExerciseTests.lab(["exercise", "check", "10", "--only", "purged-home", "--json"]).stdout)
        }
        #expect(starting.first { $0.check == "purged-home" }?.status == .stillThere)
    }

    @Test func aCauseIsEvidentOnlyFromWhatTheRunLeft() {
        func observation(keptIn: String?, busyPage: Bool?) -> Observation {
            Observation(ending: .exited(65), outcome: .verificationFailed, file: .rightSizeWrongBytes, fileName: "f", resourceName: "f",
                        size: 1 << 20, breakOffset: nil, memoryGrowth: nil, sentHEAD: false, uploadExtraBytes: nil,
                        keptIn: keptIn, busyPageInTheFile: busyPage)
        }
        let caches = Cause.fileKeptIn(["Library/Caches", "tmp"])
        #expect(caches.isEvident(in: observation(keptIn: "Library/Caches", busyPage: nil)))
        #expect(caches.isEvident(in: observation(keptIn: "Library/Caches/downloads", busyPage: nil)))
        #expect(caches.isEvident(in: observation(keptIn: "tmp", busyPage: nil)))
        #expect(!caches.isEvident(in: observation(keptIn: "Library/Application Support", busyPage: nil)))
        #expect(!caches.isEvident(in: observation(keptIn: "Library/CachesNot", busyPage: nil)))
        // Where the lab could not tell, the defect is named, as before.
        #expect(caches.isEvident(in: observation(keptIn: nil, busyPage: nil)))
        #expect(Cause.busyPageInTheFile.isEvident(in: observation(keptIn: nil, busyPage: true)))
        #expect(!Cause.busyPageInTheFile.isEvident(in: observation(keptIn: nil, busyPage: false)))
    }
}
