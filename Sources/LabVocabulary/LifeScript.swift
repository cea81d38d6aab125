/// What happens to the app while its download runs (lesson 09's `--life`), e.g.
/// `suspend@20%,terminate@50%`: events in order, each at a share of the file that the transfer
/// has reached. The system plays them; the transfer waits at each point until it has.
public struct LifeScript: Hashable, Sendable, CustomStringConvertible {
    public enum Action: String, CaseIterable, Sendable, LabName {
        /// The user leaves the app and the system suspends it (SIGSTOP): its code stops running.
        case suspend
        /// The system ends the app to free memory (SIGKILL), as it ends a suspended app.
        case terminate
        /// The user swipes the app away in the app switcher: the system ends it and cancels its
        /// background transfers.
        case forceQuit = "force-quit"
        /// The user opens the app: launched if it is not running, brought back if suspended.
        case relaunch
        /// The user opens the app, as `relaunch` does, and taps Start while the download goes on.
        case start
        /// The app crashes the next time it resumes a new task, before the transfer service has
        /// it: an app can die between what it writes down itself and what the system takes on.
        case crashAtStart = "crash-at-start"
        /// The app crashes the next time it resumes a new task, once the transfer service has it:
        /// the task runs on, and what the app meant to note after `resume()` is never written.
        case crashAfterStart = "crash-after-start"
        /// Another app on the phone starts a background download of the same file. The system's
        /// transfer service runs every app's tasks side by side, and only an app's own session
        /// lists its own: the service's files, process and connections say nothing of this app's.
        case otherApp = "other-app"
    }

    public struct Event: Hashable, Sendable, CustomStringConvertible {
        public let action: Action
        /// The share of the file, in percent (1–99), at which it happens; nil for a relaunch, a
        /// crash or another app's download, which come as soon as the event before it has.
        public let percent: Int?

        public init(_ action: Action, at percent: Int?) {
            self.action = action
            self.percent = percent
        }

        public var description: String { action.rawValue + (percent.map { "@\($0)%" } ?? "") }
    }

    public let events: [Event]

    public init(events: [Event]) { self.events = events }

    /// The lesson's own story: the user leaves the app at 20%, and the system ends it at 50%.
    public static let story = LifeScript(events: [Event(.suspend, at: 20), Event(.terminate, at: 50)])
    /// Nothing happens to the app.
    public static let none = LifeScript(events: [])

    public var description: String { events.isEmpty ? "" : events.map(\.description).joined(separator: ",") }

    /// Reads `suspend@20%,terminate@50%`; "" is a life where nothing happens. The percentages
    /// may not go down: the events happen in order, as the file arrives.
    public init(parsing text: String) throws(LabError) {
        let trimmed = text.trimmingWhitespace
        guard !trimmed.isEmpty else { self = .none; return }
        var events: [Event] = []
        for token in trimmed.split(separator: ",", omittingEmptySubsequences: false).map({ String($0).trimmingWhitespace }) {
            let event = try Self.parseEvent(token)
            if let percent = event.percent, let before = events.compactMap(\.percent).last, percent < before {
                throw LabError("life script: \(event) comes after an event at \(before)%: the percentages must not go down")
            }
            events.append(event)
        }
        guard events.count <= Self.maximumEvents else {
            throw LabError("life script: \(events.count) events; at most \(Self.maximumEvents)")
        }
        self.events = events
    }

    public static let maximumEvents = 16

    /// The events in the script's syntax, for `--help`.
    public static let syntax = "suspend@N%, terminate@N%, force-quit@N%, relaunch or relaunch@N%, start@N% (N from 1 to 99), crash-at-start, crash-after-start, other-app, joined by commas"

    private static func parseEvent(_ token: String) throws(LabError) -> Event {
        let shown = String(token.prefix(40))
        guard !token.isEmpty else { throw LabError("life script: an empty event; the events are \(syntax)") }
        let parts = token.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard let action = Action(rawValue: parts[0].lowercased()) else {
            throw LabError("life script: unknown event \"\(shown)\"; the events are \(syntax)")
        }
        if action.isACrash || action == .otherApp {
            guard parts.count == 1 else {
                throw LabError("life script: \"\(shown)\": \(action.rawValue) takes no point; "
                               + (action.isACrash ? "it comes when the app next starts a task" : "it comes as soon as the event before it has"))
            }
            return Event(action, at: nil)
        }
        guard parts.count == 2 else {
            guard action == .relaunch else { throw LabError("life script: \"\(shown)\" needs a point in the file, e.g. \(action.rawValue)@30%") }
            return Event(action, at: nil)
        }
        var number = Substring(parts[1])
        if number.hasSuffix("%") { number = number.dropLast() } else if number.hasSuffix("pct") { number = number.dropLast(3) }
        guard number.allSatisfy(\.isASCII), let percent = Int(number), (1...99).contains(percent) else {
            throw LabError("life script: \"\(shown)\": the point must be a percentage from 1% to 99%")
        }
        return Event(action, at: percent)
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}

extension LifeScript.Action {
    /// A crash of the app as it starts a task: armed when played, it comes at the app's next resume.
    public var isACrash: Bool { self == .crashAtStart || self == .crashAfterStart }
}
