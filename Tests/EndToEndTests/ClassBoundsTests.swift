import Foundation
import LabClass
import LabPlatform
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

        let made = CheckRecord(exercise: "03-outputstream", check: "clean", status: .fixed, passed: true, baseline: true,
                               detail: String(repeating: "x", count: 5_000), command: "", seconds: 0, symptomSeen: nil,
                               attempted: true, codeSHA256: "", hintsShown: 0, timestamp: "")
        #expect(made.detail.count == CheckRecord.longestText)
    }

    /// What HTTP/1.1 cannot read gets a 400 with one line saying what is wrong, as every refusal.
    @Test(arguments: [("GARBAGE\r\n\r\n", "not an HTTP/1.1 request this server can read (invalid HTTP method)"),
                      ("POST /class HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n", "the request's Content-Length is not one number of bytes"),
                      ("POST /class HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
                       "the request's Content-Length is not one number of bytes"),
                      ("GET /" + String(repeating: "a", count: 100_000) + " HTTP/1.1\r\nHost: a\r\n\r\n", "the request's head is longer than 80 KB")])
    func aMalformedRequestGetsOneLine(request: String, line: String) throws {
        let folder = try scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ClassServerProcess(data: folder.appendingPathComponent("class"))
        defer { server.stop() }
        let client = try #require(LoopbackClient(port: server.port))
        defer { client.close() }
        var patience = Platform.socketTimeout(seconds: 10)
        setsockopt(client.descriptor, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
        _ = Array(request.utf8).withUnsafeBytes { send(client.descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(client.descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            answer += buffer[0..<count]
        }
        let text = String(decoding: answer, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(text)")
        #expect(text.hasSuffix("\r\n\r\n" + line + "\n"), "\(text)")
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
        for (name, key) in [("Ada", studentKey), ("Grace", ClassFixtures.key())] {
            let submission = ClassFixtures.submission(name: name, key: key, checks: ["clean"])
            #expect(try await store.store(submission, body: Data()) == .stored)
        }
        let late = ClassFixtures.submission(name: "Late", key: ClassFixtures.key(), checks: ["clean"])
        await #expect(throws: ClassRefusal.classFull(students: 3)) { try await store.store(late, body: Data()) }
        // A student of the class still submits.
        let again = ClassFixtures.submission(name: "Ada", key: studentKey, checks: ["clean"])
        #expect(try await store.store(again, body: Data()) == .stored)
    }
}
