import Foundation
import LabKit
import LabFixtures
import LabVocabulary

/// The server a lesson downloads from, or uploads to, when no `--url` names another. The module
/// EmbeddedServer starts the lab server inside the lesson's process; LabKit never links SwiftNIO.
public protocol LessonServer: Sendable {
    var baseURL: URL { get }
    /// Where `fixture` is served with `faults`; `run` gives this process its own attempt counter.
    func url(for fixture: Fixture, faults: FaultScript, run: String) -> URL
    /// The attempt of `run`'s fault script that its requests have seen last: every GET plays the
    /// next one, and a HEAD after the last GET previews the one after it. 0 before any request.
    func attemptSeen(run: String) -> Int
    func stop()
}
