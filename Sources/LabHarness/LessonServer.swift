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
    func stop()
}
