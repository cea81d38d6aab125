import Foundation
import LabClass
import LabVocabulary
import Testing

/// What anyone with the class code can send is bounded: each field of a check, each student's
/// stored submissions, and the number of students, so the class's server and page stay small.
struct ClassBoundsTests {
    /// A detail past the bound, or a check sent twice, is refused with one line. The student's own
    /// `lab` cuts a detail at the bound, so what it sends is never refused for its length.
    @Test func oversizedOrRepeatedChecksAreRefused() throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        var long = ClassFixtures.submission(name: "Long", key: ClassFixtures.key())
        long.checks[0].detail = String(repeating: "d", count: CheckRecord.longestText + 1)
        let refused = try ClassHTTP.post(server.submissions, ClassFixtures.json(long))
        #expect(refused.status == 400 && refused.body == "a check's detail is longer than 1000 characters\n", "\(refused)")

        var twice = ClassFixtures.submission(name: "Twice", key: ClassFixtures.key())
        twice.checks.append(twice.checks[0])
        let repeated = try ClassHTTP.post(server.submissions, ClassFixtures.json(twice))
        #expect(repeated.status == 400 && repeated.body.hasPrefix("the check 03-outputstream/"), "\(repeated)")

        let made = CheckRecord(exercise: "03-outputstream", check: "clean", status: .fixed, passed: true,
                               detail: String(repeating: "x", count: 5_000), command: "", seconds: 0, symptomSeen: nil,
                               attempted: true, codeSHA256: "", hintsShown: 0, timestamp: "")
        #expect(made.detail.count == CheckRecord.longestText)
    }

    /// The class takes as many names as its limits say, and each student's submissions hold as
    /// many bytes: the next is refused, and the class goes on. Shown with small limits; the
    /// standard ones are the documented 300 students and 16 MiB each.
    @Test func theClassAndEachStudentAreBounded() async throws {
        #expect(ClassStore.Limits.standard.students == 300 && ClassStore.Limits.standard.bytesPerStudent == 16 << 20)
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try ClassStore(folder: folder.appendingPathComponent("class"), limits: .init(students: 3, bytesPerStudent: 3_000))
        let key = ClassFixtures.key()
        for _ in 0..<3 {
            let submission = ClassFixtures.submission(name: "Heavy", key: key, checks: ["clean"])
            #expect(try await store.store(submission, body: Data(count: 1_000)) == .stored)
        }
        let more = ClassFixtures.submission(name: "Heavy", key: key, checks: ["clean"])
        await #expect(throws: ClassRefusal.studentFull(bytes: 3_000)) { try await store.store(more, body: Data(count: 1)) }
        #expect(ClassRefusal.studentFull(bytes: 3_000).description
                == "this student's submissions hold 3000 bytes already, the most a class keeps for one; ask the teacher")

        let studentKey = ClassFixtures.key()
        for name in ["Ada", "Grace"] {
            let submission = ClassFixtures.submission(name: name, key: studentKey, checks: ["clean"])
            #expect(try await store.store(submission, body: Data()) == .stored)
        }
        let late = ClassFixtures.submission(name: "Late", key: ClassFixtures.key(), checks: ["clean"])
        await #expect(throws: ClassRefusal.classFull(students: 3)) { try await store.store(late, body: Data()) }
        // A student of the class still submits.
        let again = ClassFixtures.submission(name: "Ada", key: studentKey, checks: ["clean"])
        #expect(try await store.store(again, body: Data()) == .stored)
    }
}
