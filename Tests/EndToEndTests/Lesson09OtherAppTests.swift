import Foundation
import LabKit
import LabServer
import LabVocabulary
import TestServers
import TestThreads
import Testing

/// `other-app` in the life script: another app downloads the same file through the same transfer
/// service. Its task is the service's and not the lesson's app's: the app's session does not list
/// it, the run's record does not count it, and a force-quit of the app does not cancel it.
extension Lesson09Tests {
    static let otherAppsTask = "task 1 of com.example.other-app.background-downloads downloaded: "

    /// The app crashes before the service has its task; the other app's download runs, and at its
    /// half the user taps Start again. The corrected app asks its session, finds nothing of its
    /// own, and downloads in that same attempt: the server sent the file twice, once per app, and
    /// the run counts one task and one GET, the app's.
    @Test func anotherAppsDownloadIsNotTheAppsOwn() async throws {
        try await OffThePool.run {
            try withLabServer { server in
                let ran = try Self.run(["--life", "crash-at-start,other-app,start@50%", "--max-attempts", "1"], size: 1 << 20, server: server)
                #expect(ran.finished.status == 0, "\(ran.finished.stderr.suffix(800))")
                let record = try #require(ran.record)
                #expect(record.verified && record.attempts == 1)
                #expect(record.background?.launchesByUser == 2 && record.background?.backgroundTasks == 1)
                #expect(ran.gets.count == 2 && ran.gets.allSatisfy { $0.bodyBytesSent == 1 << 20 })
                #expect(record.requests.filter { $0.method == .get }.count == 1)
                #expect(ran.finished.stderr.contains("another app on the phone starts a background download of the same file"))
                #expect(ran.finished.stderr.contains(Self.otherAppsTask + "1,048,576 bytes"), "\(ran.finished.stderr.suffix(800))")
                #expect(!FileManager.default.fileExists(atPath: ran.output.path + ".phone"))
            }
        }
    }

    /// A force-quit cancels the app's tasks only: the other app's download goes on to its end.
    /// The other app starts once the app's own task has passed 10%, so the app has a task to
    /// cancel whichever download reaches 30% first.
    @Test func aForceQuitLeavesAnotherAppsDownload() async throws {
        try await OffThePool.run {
            try withLabServer { server in
                let ran = try Self.run(["--life", "relaunch@10%,other-app,force-quit@30%", "--max-attempts", "1"], size: 2 << 20, server: server)
                #expect(ran.finished.status != 0)
                #expect(ran.finished.stderr.contains("the user force-quit the app: 1 task cancelled"), "\(ran.finished.stderr.suffix(800))")
                #expect(ran.finished.stderr.contains(Self.otherAppsTask + "2,097,152 bytes"), "\(ran.finished.stderr.suffix(800))")
            }
        }
    }
}
