/// Copied from Sources/lesson-09-background-session/Shared.swift by `lab exercise reset`: what both
/// variants use. Your code is in Article.swift.

/// The app's constants.
enum App {
    /// The background session's identifier: the same at every launch, so the session made at
    /// launch is the one the system's events are for.
    static let sessionIdentifier = "com.example.download-lab.lesson-09"
}
