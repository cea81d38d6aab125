import Foundation
import LabCatalogue
import LabVocabulary
import TestThreads
import Testing

/// The defect catalogue holds for the lessons themselves, and the pages list the same defects.
///
/// Every lesson's checks run twice elsewhere, on the exercise's code: the untouched exercise is
/// the article variant (ExerciseTests.startingCodeIsMadeFromTheArticleVariant), and
/// `untouchedExercisesFailExactlyThePredictedChecks` expects each defect's symptom and the skills
/// its defects break; `correctedLogicInTheExercisePassesEveryCheck` expects every check to hold
/// with no symptom. Here `--variant` is shown to check the lesson's own code, on one lesson.
struct CatalogueTests {
    @Test func theVariantOptionChecksTheLessonsOwnCode() async throws {
        try await ExerciseTests.takingTurns {
            let name = "02"
            let lesson = try #require(Catalogue.lesson(named: name))
            for variant in Variant.allCases {
                let finished = try ExerciseTests.lab(["exercise", "check", lesson.id.number, "--variant", variant.rawValue, "--json"])
                let records = try ExerciseTests.records(finished.stdout)
                #expect(records.map(\.check) == lesson.checks.map(\.id), "\(finished.stderr)")
                let defects = Set(lesson.defects.map(\.id))
                for record in records where defects.contains(record.check) {
                    if variant == .article {
                        #expect(!record.passed && record.symptomSeen == true, "\(name) article \(record.check): \(record.detail)")
                    } else {
                        #expect(record.passed && record.symptomSeen == false, "\(name) corrected \(record.check): \(record.detail)")
                    }
                }
                // The skills: the article fails those its defects break; the corrected variant holds them all.
                for skill in lesson.skills {
                    let record = try #require(records.first { $0.check == skill.id })
                    let broken = variant == .article && !defects.isDisjoint(with: skill.brokenBy)
                    #expect(record.passed == !broken, "\(name) \(variant) \(skill.id): \(record.detail)")
                }
                let clean = try #require(records.first)
                #expect(clean.passed == (variant == .corrected || !lesson.failingScenarios.contains(.clean)), "\(clean.detail)")
                #expect(finished.status == (records.allSatisfy(\.passed) ? 0 : 1))
            }
        }
    }

    /// The first column of each page's "Where it breaks" table is the defect's id, in backticks.
    @Test(arguments: Catalogue.lessons.map(\.id.rawValue))
    func pageTableNamesTheCatalogueDefects(lesson name: String) throws {
        let lesson = try #require(Catalogue.lesson(named: name))
        let page = try String(contentsOf: ExerciseTests.packageRoot.appendingPathComponent("Lessons/\(name).md"), encoding: .utf8)
        let section = try #require(page.components(separatedBy: "\n## Where it breaks\n").dropFirst().first)
            .components(separatedBy: "\n## ")[0].components(separatedBy: "\n### ")[0]
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `") }
        let ids = rows.compactMap { $0.firstMatch(of: /^\| `([a-z0-9-]+)`/)?.output.1 }.map(String.init)
        #expect(ids == lesson.everyDefect.map(\.id), "Lessons/\(name).md")
        // The skills' checks have a table of their own, under the defects'.
        let skillRows = page.components(separatedBy: "\n### What the checks also ask\n").dropFirst().first?
            .components(separatedBy: "\n#")[0].split(separator: "\n").filter { $0.hasPrefix("| `") } ?? []
        #expect(skillRows.compactMap { $0.firstMatch(of: /^\| `([a-z0-9-]+)`/)?.output.1 }.map(String.init) == lesson.skills.map(\.id),
                "Lessons/\(name).md")
        // A defect the page names has a row, and so a check: a weakness the checks do not grade is called one.
        for line in section.split(separator: "\n") where !line.hasPrefix("|") {
            #expect(!line.localizedCaseInsensitiveContains("defect") || !line.contains("no row"), "Lessons/\(name).md: \(line)")
        }
    }

    @Test func compareExpectsOnlyTheFailuresTheCatalogueNames() throws {
        let fileHandle = try #require(Catalogue.lesson(named: "02"))
        func spliced(_ file: FileState) -> Observation {
            Observation(ending: .exited(65), outcome: .verificationFailed, file: file, fileName: "f.bin", resourceName: "f.bin",
                        size: 16 << 20, breakOffset: 5_033_164, memoryGrowth: nil, sentHEAD: false,
                        uploadExtraBytes: nil)
        }
        let appended = spliced(.longer(bytes: (16 << 20) + 5_033_164))
        #expect(fileHandle.predicts(appended, in: .dropResume))
        #expect(fileHandle.predicts(appended, in: .ignoreRange))
        // The same failure where no defect of the lesson shows, or another failure: not expected.
        #expect(!fileHandle.predicts(appended, in: .slowDisk))
        #expect(!fileHandle.predicts(spliced(.rightSizeWrongBytes), in: .dropResume))
        var timedOut = appended
        timedOut.ending = .timedOut(seconds: 60)
        #expect(!fileHandle.predicts(timedOut, in: .dropResume))
        let outputStream = try #require(Catalogue.lesson(named: "03"))
        #expect(!outputStream.predicts(appended, in: .dropResume))
        #expect(outputStream.predicts(spliced(.rightSizeWrongBytes), in: .entityChanged))
    }

    /// Lesson 06's crowd must have run: a run that never started the other transfers cannot
    /// show their starvation, whatever it printed.
    @Test func aCrowdTheServerNeverSawStarvesNothingAndFails() throws {
        let parked = try #require(Catalogue.lesson(named: "06")?.checks.first { $0.id == "parked-workers" })
        func crowd(_ fetched: Int, of wanted: Int, outcome: Outcome = .verified) -> Observation {
            Observation(ending: .exited(0), outcome: outcome, file: .right, fileName: "f.bin", resourceName: "f.bin",
                        size: 1 << 20, breakOffset: nil, memoryGrowth: nil, sentHEAD: false, uploadExtraBytes: nil,
                        crowd: (fetched, wanted))
        }
        #expect(parked.holds(in: crowd(2, of: 2)))
        #expect(!parked.holds(in: crowd(0, of: 2)))
        #expect(!parked.holds(in: crowd(1, of: 2)))
        #expect(!parked.holds(in: crowd(2, of: 2, outcome: .unresponsive)))
    }

    /// Lesson 05 names only whole files: a part under the file's name at a kill fails every one
    /// of its checks that kills, however the rerun ends. Lesson 03, which writes in place, is not
    /// held to it.
    @Test func aPartUnderTheFileNameAtAKillFailsLesson05Only() throws {
        func killed(leaving file: FileState?) -> Observation {
            Observation(ending: .exited(0), outcome: .verified, file: .right, fileName: "f.bin", resourceName: "f.bin",
                        size: 16 << 20, breakOffset: nil, afterTheBreak: AfterTheBreak(reached: 7 << 20, range: "bytes=7340032-", status: 206),
                        memoryGrowth: nil, sentHEAD: false, uploadExtraBytes: nil, bytesSent: 16 << 20, fileAtTheKill: file)
        }
        let inMemory = try #require(Catalogue.lesson(named: "05")?.check(named: "resume-data-in-memory"))
        #expect(inMemory.holds(in: killed(leaving: .missing)))
        #expect(inMemory.holds(in: killed(leaving: nil)))
        #expect(!inMemory.holds(in: killed(leaving: .startOfTheFile(bytes: 7 << 20))))
        #expect(!inMemory.holds(in: killed(leaving: .shorter(bytes: 7 << 20))))
        let outputStream = try #require(Catalogue.lesson(named: "03")?.checks.first { $0.trial.sequel.kills })
        #expect(!outputStream.leavesAPartUnderTheName(killed(leaving: .startOfTheFile(bytes: 7 << 20))))
    }

    /// A new install that asks for a Range found resume data outside its own folder; one that
    /// starts over holds, and may be sent the file twice, once per install.
    @Test func aNewInstallThatResumesFails() throws {
        let check = try #require(Catalogue.lesson(named: "05")?.check(named: "new-install-starts-over"))
        let size = check.trial.size
        func rerun(range: String?, sent: Int64) -> Observation {
            Observation(ending: .exited(0), outcome: .verified, file: .right, fileName: "f.bin", resourceName: "f.bin",
                        size: size, breakOffset: nil, afterTheBreak: AfterTheBreak(reached: size / 2, range: range, status: range == nil ? 200 : 206),
                        memoryGrowth: nil, sentHEAD: false, uploadExtraBytes: nil, bytesSent: sent, fileAtTheKill: .missing)
        }
        #expect(check.holds(in: rerun(range: nil, sent: size + size / 2)))
        #expect(!check.holds(in: rerun(range: "bytes=\(size / 2)-", sent: size)))
        #expect(check.bytesAllowed.map { $0 >= 2 * size } == true)
        #expect(!check.holds(in: rerun(range: nil, sent: 3 * size + (8 << 20))))
    }
    /// Lesson 05 bounds requests as well as bytes: a task cancelled every few hundred KiB keeps a
    /// blob on disk and wastes only what was in flight each time, which depends on the machine's
    /// speed, so the server's count of requests judges it. The corrected variant's run (four
    /// requests: the Pause's resume, the stall, the rerun and its own Pause) holds; one Pause per
    /// 768 KiB does not, whatever the bytes. Other lessons are not bounded by requests.
    @Test func aTaskThatPausesItselfAgainAndAgainFailsLesson05() throws {
        let check = try #require(Catalogue.lesson(named: "05")?.check(named: "resume-data-in-memory"))
        func run(requests: Int) -> Observation {
            Observation(ending: .exited(0), outcome: .verified, file: .right, fileName: "f.bin", resourceName: "f.bin",
                        size: check.trial.size, breakOffset: nil,
                        afterTheBreak: AfterTheBreak(reached: 15 << 20, range: "bytes=15204352-", status: 206),
                        memoryGrowth: nil, sentHEAD: false, uploadExtraBytes: nil, bytesSent: check.trial.size, requestsSent: requests,
                        fileAtTheKill: .missing)
        }
        #expect(check.requestsAllowed == 8)
        #expect(check.holds(in: run(requests: 4)))
        #expect(check.holds(in: run(requests: 8)))
        #expect(!check.holds(in: run(requests: 9)))
        #expect(!check.holds(in: run(requests: 25)))
        let drop = try #require(Catalogue.lesson(named: "05")?.check(named: "resume-data-only-on-pause"))
        #expect(drop.requestsAllowed == 5)
        #expect(Catalogue.lessons.filter { $0.id != .downloadTaskResume }.allSatisfy { $0.checks.allSatisfy { $0.requestsAllowed == nil } })
    }
}
