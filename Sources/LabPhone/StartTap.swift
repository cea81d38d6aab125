import Foundation

/// A tap on Start that the phone asked the app for (`start@N%`). The file's point stays held
/// until the app has answered the tap, and `holdSeconds` after: a background transfer goes at the
/// system's pace, and may wait, so its partial file does not say whether a task still runs; only
/// the session does. An app that watches the file for a moment after the tap sees it stand still.
public struct StartTap: Sendable {
    public let askedAt: Date
    public private(set) var answeredAt: Date?
    /// The point of the life script the file is held at, once reached.
    public var point: Int?

    public init(askedAt: Date) { self.askedAt = askedAt }

    public static let holdSeconds: Double = 3
    /// How long the phone waits for an app that never answers.
    public static let answerPatience: Double = 10

    public enum Step: Equatable, Sendable {
        case hold
        /// The point goes; `answered` is false when the app never answered.
        case release(answered: Bool)
    }

    /// What to do now, the app having answered (`answered`) or not.
    public mutating func step(now: Date, answered: Bool) -> Step {
        if answeredAt == nil, answered { answeredAt = now }
        if let answeredAt {
            return now.timeIntervalSince(answeredAt) < Self.holdSeconds ? .hold : .release(answered: true)
        }
        return now.timeIntervalSince(askedAt) > Self.answerPatience ? .release(answered: false) : .hold
    }
}
