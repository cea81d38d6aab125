import Foundation
import LabFixtures
import LabKit
import LabPhone
import LabServer
import TestServers
import TestThreads
import Testing

/// Lesson 09's hand-over, killed at each of its steps (`HandOverStep`): the service or the app
/// ends itself there with SIGKILL, once, and the run still ends with the whole file, verified,
/// and nothing downloaded twice.
@Suite(.serialized)
struct Lesson09HandOverTests {
    @Test(arguments: HandOverStep.allCases)
    func aKillAtEveryHandOverStepEndsExact(step: HandOverStep) async throws {
        try await OffThePool.run {
            try withLabServer { server in
                for life in ["", "suspend@20%,terminate@50%"] {
                    let ran = try Lesson09Tests.run(["--life", life], size: 1 << 20, server: server,
                                                    environment: [HandOverStep.variable: step.rawValue], timeout: 60)
                    defer { try? FileManager.default.removeItem(at: ran.output.deletingLastPathComponent()) }
                    let story = ran.finished.stderr
                    #expect(ran.finished.status == 0, "\(step), life \(life): \(story.suffix(800))")
                    #expect(ran.record?.verified == true, "\(step), life \(life)")
                    #expect(try FileDigest.sha256Hex(of: ran.output) == Fixture(name: "lesson-09.bin", size: 1 << 20).sha256Hex())
                    // The kill happened where it was asked for, and the phone saw its child die.
                    #expect(story.contains("the \(step.role == "service" ? "transfer service" : "app") ended (signal 9)"),
                            "\(step), life \(life): \(story.suffix(800))")
                    #expect(ran.bytesSentTwice == 0, "\(step), life \(life): \(ran.bytesSentTwice) bytes sent twice\n\(story.suffix(2500))")
                    #expect(!FileManager.default.fileExists(atPath: ran.output.path + ".phone"), "\(step), life \(life)")
                }
            }
        }
    }
}
