import Foundation
import LabPhone
import Testing

/// The phone's decision about a tap on Start, without a phone: the file stays held until the
/// app has answered, and three seconds after, so an app that watches the service's partial file
/// for a moment sees it stand still.
struct Lesson09StartTapTests {
    let asked = Date(timeIntervalSinceReferenceDate: 1_000)

    @Test func theFileIsHeldUntilTheAnswerAndThreeSecondsAfter() {
        var tap = StartTap(askedAt: asked)
        #expect(tap.step(now: asked + 0.2, answered: false) == .hold)
        #expect(tap.step(now: asked + 1, answered: true) == .hold)
        #expect(tap.answeredAt == asked + 1)
        // Seen again later, the answer keeps its first moment.
        #expect(tap.step(now: asked + 3.9, answered: true) == .hold)
        #expect(tap.step(now: asked + 1 + StartTap.holdSeconds, answered: true) == .release(answered: true))
    }

    @Test func anAppThatNeverAnswersIsWaitedForTenSeconds() {
        var tap = StartTap(askedAt: asked)
        #expect(tap.step(now: asked + StartTap.answerPatience - 0.1, answered: false) == .hold)
        #expect(tap.step(now: asked + StartTap.answerPatience + 0.1, answered: false) == .release(answered: false))
    }
}
