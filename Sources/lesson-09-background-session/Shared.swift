/// Lesson 09: what both variants use.

/// The app's constants.
enum App {
    /// The background session's identifier: the same at every launch, so the session made at
    /// launch is the one the system's events are for.
    static let sessionIdentifier = "com.example.download-lab.lesson-09"
}
