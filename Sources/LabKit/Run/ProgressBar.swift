import Foundation
import LabVocabulary
import Synchronization

/// Shows how far a download is: a redrawn bar with bytes, percent, speed and ETA on a terminal,
/// and a plain line at every quarter otherwise. The lesson supplies both numbers, so a lesson that
/// computes its total wrongly shows it (for example, more than 100%).
public final class ProgressBar: Sendable {
    private let console: Console
    private struct State {
        var attemptStart = Date()
        var bytesAtAttemptStart: Int64 = 0
        var lastDraw = Date.distantPast
        /// Quarters shown with a total; doublings from 1 MiB shown without one.
        var quartersShown = 0
        var started = false
    }
    private let state = Mutex(State())
    private let reports = Mutex(ProgressRecord())

    /// Every report of the run so far, across attempts.
    public var record: ProgressRecord { reports.withLock { $0 } }

    package init(console: Console) { self.console = console }

    /// Reports `received` bytes of `expected` (zero or less when the total is unknown).
    public func update(received: Int64, expected: Int64) {
        reports.withLock { $0.add(received: received, expected: expected) }
        let now = Date()
        let text: String? = state.withLock { state in
            if !state.started {
                state.started = true
                state.attemptStart = now
                state.bytesAtAttemptStart = received
                // A resumed attempt starts partway: report the next quarter it crosses.
                state.quartersShown = expected > 0 ? Int(min(4, received * 4 / expected)) : 0
            }
            if console.isTerminal {
                guard now.timeIntervalSince(state.lastDraw) >= 0.1 || received == expected else { return nil }
                state.lastDraw = now
                return Self.bar(received: received, expected: expected,
                                speed: Self.speed(state, received: received, now: now))
            }
            guard expected > 0 else {
                // No total (a chunked body): the bytes so far and the speed, at each doubling
                // from 1 MiB, so a long download prints a line now and then, never a percentage.
                var milestone: Int64 = 1 << 20
                for _ in 0..<state.quartersShown { milestone *= 2 }
                guard received >= milestone else { return nil }
                while received >= milestone * 2 { milestone *= 2; state.quartersShown += 1 }
                state.quartersShown += 1
                let speed = Self.speed(state, received: received, now: now)
                return "progress \(ByteFormat.iec(received)) so far, \(ByteFormat.iec(Int64(speed)))/s (total not known)"
            }
            // Not capped at 4: a lesson whose total is wrong shows 125%, 150%, ...
            let quarter = Int(received * 4 / expected)
            guard quarter > state.quartersShown else { return nil }
            state.quartersShown = quarter
            let percent = Double(received) * 100 / Double(expected)
            return String(format: "progress %.0f%%: %@ of %@", percent, ByteFormat.iec(received), ByteFormat.iec(expected))
        }
        guard let text else { return }
        if console.isTerminal { console.progressLine(text) } else { console.line(text) }
    }

    /// Starts measuring speed afresh, for a new attempt.
    package func beginAttempt() {
        state.withLock { $0 = State() }
    }

    private static func speed(_ state: State, received: Int64, now: Date) -> Double {
        let seconds = now.timeIntervalSince(state.attemptStart)
        return seconds > 0 ? Double(received - state.bytesAtAttemptStart) / seconds : 0
    }

    private static func bar(received: Int64, expected: Int64, speed: Double) -> String {
        let width = 24
        guard expected > 0 else {
            return "\(ByteFormat.iec(received))  \(ByteFormat.iec(Int64(speed)))/s"
        }
        let fraction = Double(received) / Double(expected)
        let filled = max(0, min(width, Int(fraction * Double(width))))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let remaining = expected - received
        let eta = speed > 0 && remaining > 0 ? String(format: "ETA %.1f s", Double(remaining) / speed) : ""
        return String(format: "%@ %5.1f%%  %@ / %@  %@/s  %@", bar, fraction * 100,
                      ByteFormat.iec(received), ByteFormat.iec(expected), ByteFormat.iec(Int64(speed)), eta)
    }
}
