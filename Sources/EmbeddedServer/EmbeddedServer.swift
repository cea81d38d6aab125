import Foundation
import LabFixtures
import LabHarness
import LabKit
import LabPhone
import LabServer
import LabVocabulary

/// The lab server inside a lesson's process: what a lesson's `main.swift` runs its strategy
/// against. This module is the only way a lesson links SwiftNIO; its strategy files need
/// Foundation and LabKit alone.
extension Lesson {
    /// Runs the lesson against the lab server (or `--url`) and exits with an `ExitStatus`.
    public func run(_ makeDownload: (LessonRun, Way) -> any LessonDownload) -> Never {
        run(startingServer: EmbeddedLabServer.start, makeDownload)
    }

    /// Runs a lesson written with async/await against the lab server (or `--url`).
    public func run(_ makeDownload: (LessonRun, Way) -> any AsyncLessonDownload) -> Never {
        run(startingServer: EmbeddedLabServer.start, makeDownload)
    }

    /// Runs an upload lesson against the lab server's `POST /upload` (or `--url`).
    public func run(_ makeUpload: (LessonRun, Way) -> any LessonUpload) -> Never {
        run(startingServer: EmbeddedLabServer.start, makeUpload)
    }
}

/// A lesson that shows one way: its strategy is made from the run alone.
extension Lesson where Way == OneWay {
    public func run(_ makeDownload: (LessonRun) -> any LessonDownload) -> Never {
        run { run, _ in makeDownload(run) }
    }

    public func run(_ makeDownload: (LessonRun) -> any AsyncLessonDownload) -> Never {
        run { run, _ in makeDownload(run) }
    }

    public func run(_ makeUpload: (LessonRun) -> any LessonUpload) -> Never {
        run { run, _ in makeUpload(run) }
    }

    /// Runs lesson 09: this process is the phone, and its app and transfer service are this
    /// program again, in processes of their own.
    public func run(_ makeApp: (LessonRun) -> any BackgroundApp) -> Never {
        run(startingServer: EmbeddedLabServer.start, makeApp)
    }
}

private struct EmbeddedLabServer: LessonServer {
    let server: LabServer

    static func start() throws -> any LessonServer { EmbeddedLabServer(server: try LabServer.start()) }

    var baseURL: URL { server.baseURL }

    func url(for fixture: Fixture, faults: FaultScript, run: String) -> URL {
        server.url(for: fixture, faults: faults.isNone ? nil : faults.description, run: run)
    }

    func attemptSeen(run: String) -> Int {
        let requests = server.requestLog.filter { $0.target.hasSuffix("run=\(run)") && ($0.method == .get || $0.method == .head) }
        let gets = requests.count { $0.method == .get }
        return gets + (requests.last?.method == .head ? 1 : 0)
    }

    func stop() { server.stop() }
}
