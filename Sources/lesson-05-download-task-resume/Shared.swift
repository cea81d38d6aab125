/// Lesson 05: what both variants use.

/// The person pressing the app's buttons.
enum App {
    /// Pause is pressed once, at this fraction of the file.
    static let pausePressedAt = 0.4
}
