/// Copied from Sources/lesson-05-download-task-resume/Shared.swift by `lab exercise reset`: what both
/// variants use. Your code is in Article.swift.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// The app around the download: its tmp folder, and the person pressing its buttons.
enum App {
    /// Where download tasks keep their temporary files, like an app's tmp folder beside Documents.
    static let temporaryFolder = FileManager.default.temporaryDirectory.appendingPathComponent("download-lab-tmp")
    /// Pause is pressed once, at this fraction of the file.
    static let pausePressedAt = 0.4
}
