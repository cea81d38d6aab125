/// Copied from Sources/lesson-05-download-task-resume/Shared.swift by `lab exercise reset`: what both
/// variants use. Your code is in Article.swift.

/// The person pressing the app's buttons.
enum App {
    /// Pause is pressed once, at this fraction of the file.
    static let pausePressedAt = 0.4
}
