import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// The app's process: it launches the lesson's `BackgroundApp`, runs its main queue, and ends
/// once the app has nothing left to do (what iOS would suspend), telling the phone what it saw.
final class AppProcess: @unchecked Sendable {
    // @unchecked: the state that changes is behind Mutexes and atomics; the rest is set at launch.
    let phone: PhoneFolder
    let settings: PhoneSettings
    let console: Console
    let run: LessonRun
    private let returned = Atomic(false)
    private struct Sessions {
        var background: [BackgroundSession] = []
        /// Held for the process's life, as Foundation holds a session until it is invalidated:
        /// an app that keeps only its task still hears its session's events.
        var plain: [InProcessSession] = []
        var madePerIdentifier: [String: Int] = [:]
        /// Identifiers whose `urlSessionDidFinishEvents` has been delivered, and when.
        var eventsFinishedAt: [String: Date] = [:]
        var handlerCalled: Set<String> = []
        var wokenFor: Set<String> = []
        var filesHandedOver = 0
    }
    private let sessions = Mutex(Sessions())
    private let launched = Date()

    /// The app of this process, for `LessonRun.makeSession(configuration:delegate:delegateQueue:)`.
    nonisolated(unsafe) static var current: AppProcess?

    /// How long the system waits for the completion handler of a launch for background events
    /// before it suspends the app all the same.
    static let handlerPatienceSeconds = 5.0

    private init(settings: PhoneSettings, console: Console, run: LessonRun) {
        phone = settings.folder
        self.settings = settings
        self.console = console
        self.run = run
    }

    var launchHasReturned: Bool { returned.load(ordering: .acquiring) }
    /// A launch for background events whose events the phone still holds (`--slow-events`).
    var eventsHeldBack: Bool {
        !settings.backgroundEventsFor.isEmpty && Date().timeIntervalSince(launched) < settings.eventsDelaySeconds
    }
    /// Whether the phone (`--slow-events`) still holds `urlSessionDidFinishEvents` back after a
    /// task's end was told at `told`: the events' end comes a while after the last of them, so
    /// a handler called on a guess from the last task event comes too early.
    func holdsFinishEvents(after told: Date?) -> Bool {
        guard let told, !settings.backgroundEventsFor.isEmpty, settings.eventsDelaySeconds > 0 else { return false }
        return Date().timeIntervalSince(told) < settings.eventsDelaySeconds / 2
    }
    /// The system has woken the app for events that its delegate has not yet heard of.
    var wakePending: Bool { FileManager.default.fileExists(atPath: phone.appReports.appendingPathComponent("wake.json").path) }
    var inBackground: Bool { settings.inBackground }

    func say(_ line: String) { console.line("  app: " + line) }

    /// The app process: never returns.
    static func main(_ settings: PhoneSettings, make: (LessonRun) -> any BackgroundApp) -> Never {
        PhoneRole.phone = settings.phoneProcess
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)  // a write past a file size limit fails with EFBIG instead
        let console = Console(storyToStandardError: settings.storyToStandardError, quiet: settings.quiet)
        SimulatedDisk.writeDelayMicroseconds.store(settings.writeDelayMicroseconds, ordering: .relaxed)
        TransferLimits.active = settings.limits
        let url = URL(string: settings.url ?? "") ?? URL(fileURLWithPath: "/")
        let exchangeLog = HTTPExchangeLog()
        exchangeLog.observe { event in
            if let line = ExchangeStory.line(for: event) { console.line("  app:" + line.drop { $0 == " " }.prepending(" ")) }
        }
        var run = LessonRun(url: url, faultFreeURL: url, file: URL(fileURLWithPath: settings.file ?? ""), variant: settings.variant ?? .corrected,
                            wayName: nil, progress: ProgressBar(console: console), uploadFixture: nil, console: console,
                            exchangeLog: exchangeLog)
        let process = AppProcess(settings: settings, console: console, run: run)
        current = process
        run.appSessions = process
        LifePoints.beforeWaiting.withLock { $0 = { process.saveExchanges() } }
        // nonisolated(unsafe): the app is called on the main queue only, as UIKit calls an app.
        nonisolated(unsafe) let app = make(run)
        DispatchQueue.main.async {
            app.didFinishLaunching()
            for identifier in settings.backgroundEventsFor {
                let handler: @Sendable () -> Void = { process.completionHandlerCalled(for: identifier) }
                app.handleEventsForBackgroundURLSession(identifier, completionHandler: handler)
            }
            process.returned.store(true, ordering: .releasing)
        }
        Thread { process.endWhenIdle(app: app) }.start()
        // The main run loop, as UIApplicationMain runs it: it drains the main queue on the main
        // thread (dispatchMain() on Linux would drain it on another).
        while true { _ = RunLoop.main.run(mode: .default, before: .distantFuture) }
    }

    // MARK: What the sessions tell it

    /// A background session was made; false when one with this identifier exists already.
    func sessionMade(identifier: String) -> Bool {
        let count = sessions.withLock { sessions in
            sessions.madePerIdentifier[identifier, default: 0] += 1
            return sessions.madePerIdentifier[identifier]!
        }
        try? writeWhole(count, to: phone.appReports.appendingPathComponent("sessions-made-\(Self.fileSafe(identifier)).json"))
        if count > 1 {
            say("a background session with identifier \"\(identifier)\" already exists: Apple calls what follows undefined, "
                + "and here this one hears no events")
        }
        return count == 1
    }

    func launchedForEvents(of identifier: String) -> Bool { settings.backgroundEventsFor.contains(identifier) }

    func finishedEvents(of identifier: String) {
        sessions.withLock { $0.eventsFinishedAt[identifier] = Date() }
    }

    private func completionHandlerCalled(for identifier: String) {
        let onMain = Thread.isMainThread
        let (first, eventsIn) = sessions.withLock { ($0.handlerCalled.insert(identifier).inserted, $0.eventsFinishedAt[identifier] != nil) }
        guard first else { return }
        say("the completion handler of \(identifier) is called" + (onMain ? ", on the main queue" : ", NOT on the main queue")
            + (eventsIn ? "" : ", BEFORE the session has delivered its events"))
        try? writeWhole(HandlerReport(onMainQueue: onMain, afterTheEvents: eventsIn), to: Self.handlerReport(identifier, in: phone))
    }

    static func handlerReport(_ identifier: String, in phone: PhoneFolder) -> URL {
        phone.appReports.appendingPathComponent("handler-\(fileSafe(identifier)).json")
    }

    static func fileSafe(_ identifier: String) -> String {
        String(identifier.unicodeScalars.map { CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "-" ? Character($0) : "_" }.prefix(100))
    }

    /// A file reached `didFinishDownloadingTo`, through a session of the app's.
    func handedOver() {
        let count = sessions.withLock { sessions in
            sessions.filesHandedOver += 1
            return sessions.filesHandedOver
        }
        try? writeWhole(count, to: phone.appReports.appendingPathComponent("handed-over.json"))
    }

    /// The system woke the suspended app for events (`wake.json`): the app delegate hears of them
    /// on the main queue before any session delivers one.
    func answerWake(app: any BackgroundApp) {
        let wake = phone.appReports.appendingPathComponent("wake.json")
        guard let identifiers = readWhole([String].self, from: wake) else { return }
        try? FileManager.default.removeItem(at: wake)
        sessions.withLock { sessions in
            for identifier in identifiers { sessions.eventsFinishedAt[identifier] = nil }
            sessions.wokenFor.formUnion(identifiers)
        }
        for session in sessions.withLock({ $0.background }) where identifiers.contains(session.identifier) {
            session.expectFinishEvents()
        }
        // nonisolated(unsafe): the app is called on the main queue only, as UIKit calls an app.
        nonisolated(unsafe) let app = app
        DispatchQueue.main.sync {
            for identifier in identifiers {
                let handler: @Sendable () -> Void = { self.completionHandlerCalled(for: identifier) }
                app.handleEventsForBackgroundURLSession(identifier, completionHandler: handler)
            }
        }
    }

    func adopt(_ session: BackgroundSession) { sessions.withLock { $0.background.append(session) } }
    func adopt(_ session: InProcessSession) { sessions.withLock { $0.plain.append(session) } }

    /// The app broke a rule of the API: Apple's raises an exception, which ends the app. Here it
    /// ends with one line, through the phone, and exit 70.
    func refuse(_ message: String) -> Never {
        try? message.write(to: phone.appReports.appendingPathComponent("misuse.txt"), atomically: true, encoding: .utf8)
        saveExchanges()
        exit(ExitStatus.misuse.rawValue)
    }

    // MARK: Ending

    /// Told as soon as it is so: the phone may end this process at any moment.
    private func tellWhetherTheAppStartedAProgram() {
        let told = Self.startedAProgramFile(in: phone)
        guard ProgramsStarted.byTheCode, !FileManager.default.fileExists(atPath: told.path) else { return }
        _ = FileManager.default.createFile(atPath: told.path, contents: nil)
    }

    static func startedAProgramFile(in phone: PhoneFolder) -> URL { phone.appReports.appendingPathComponent("started-a-program") }

    /// Ends the process once the app has nothing left to do for a moment: no transfer of its own
    /// sessions running, no event due, and each launch for background events answered (or
    /// waited for long enough).
    private func endWhenIdle(app: any BackgroundApp) {
        var quietRounds = 0
        while true {
            usleep(50_000)
            if launchHasReturned { answerWake(app: app) }
            tapStartOnceTheEventsAreIn(app: app)
            answerStartTap(app: app)
            saveExchanges()
            tellWhetherTheAppStartedAProgram()
            if !PhoneRole.phoneIsAlive { exit(0) }  // the phone is gone
            quietRounds = isIdle() ? quietRounds + 1 : 0
            if quietRounds >= 4 { break }
        }
        let (called, woken) = sessions.withLock { ($0.handlerCalled, $0.wokenFor) }
        if !settings.backgroundEventsFor.isEmpty || !woken.isEmpty {
            for identifier in Set(settings.backgroundEventsFor).union(woken) where !called.contains(identifier) {
                say("the completion handler of \(identifier) was never called: the system suspends the app all the same")
            }
        }
        saveExchanges()
        tellWhetherTheAppStartedAProgram()
        exit(0)
    }

    /// The user taps Start once the app is up: after the events that waited for its sessions.
    private func tapStartOnceTheEventsAreIn(app: any BackgroundApp) {
        guard settings.pressStart, !startTapped, launchHasReturned,
              sessions.withLock({ $0.background }).allSatisfy(\.hasDeliveredOnce) else { return }
        startTapped = true
        // nonisolated(unsafe): the app is called on the main queue only, as UIKit calls an app.
        nonisolated(unsafe) let app = app
        DispatchQueue.main.async {
            self.say("the user taps Start")
            app.startTapped()
            self.startHasReturned.store(true, ordering: .releasing)
        }
    }

    private var startTapped = false
    private let startHasReturned = Atomic(false)

    /// Where the phone says the user tapped Start (`start@N%`), and where the app says it heard it.
    static func startTapFile(in phone: PhoneFolder) -> URL { phone.appReports.appendingPathComponent("start-tap.json") }
    static func startAnsweredFile(in phone: PhoneFolder) -> URL { phone.appReports.appendingPathComponent("start-answered.json") }

    /// The user tapped Start in the running app: the app hears it on the main queue, once its
    /// launch has returned and its sessions have told what waited.
    private func answerStartTap(app: any BackgroundApp) {
        let tap = Self.startTapFile(in: phone)
        guard launchHasReturned, sessions.withLock({ $0.background }).allSatisfy(\.hasDeliveredOnce),
              FileManager.default.fileExists(atPath: tap.path) else { return }
        try? FileManager.default.removeItem(at: tap)
        // nonisolated(unsafe): the app is called on the main queue only, as UIKit calls an app.
        nonisolated(unsafe) let app = app
        DispatchQueue.main.sync {
            self.say("the user taps Start")
            app.startTapped()
        }
        try? writeWhole(true, to: Self.startAnsweredFile(in: phone))
    }

    private func isIdle() -> Bool {
        guard launchHasReturned, !settings.pressStart || startHasReturned.load(ordering: .acquiring) else { return false }
        let (background, handled, finished, woken) = sessions.withLock {
            ($0.background, $0.handlerCalled, $0.eventsFinishedAt, $0.wokenFor)
        }
        // One count, kept as tasks start and end, rather than asking each session in turn: a
        // task started from another's completion (a retry) is counted before that one ends, so
        // no look finds the app idle between them, however the threads are scheduled.
        guard background.allSatisfy(\.isIdle), InProcessTask.running.load(ordering: .acquiring) == 0 else { return false }
        let waited = Date().timeIntervalSince(launched) >= Self.handlerPatienceSeconds
        return Set(settings.backgroundEventsFor).union(woken).allSatisfy { identifier in
            if handled.contains(identifier) { return true }
            // The events were told, and the app still has a moment to call the handler.
            if let at = finished[identifier] { return Date().timeIntervalSince(at) >= Self.handlerPatienceSeconds }
            return waited
        }
    }


    /// The app's own exchanges (a session that is not a background one), for the phone's record.
    func saveExchanges() {
        reportPeakMemory(role: "app", in: phone)
        let exchanges = run.exchangeLog.exchanges
        guard !exchanges.isEmpty else { return }
        try? writeWhole(exchanges, to: phone.root.appendingPathComponent("exchanges-app-\(getpid()).json"))
    }
}

struct HandlerReport: Codable {
    var onMainQueue: Bool
    /// The session had delivered every event that waited (`urlSessionDidFinishEvents`) first.
    var afterTheEvents: Bool
}

extension AppProcess: AppSessions {
    func makeSession(configuration: URLSessionConfiguration, delegate: (any LabURLSessionDelegate)?,
                     delegateQueue: OperationQueue?, exchangeLog: HTTPExchangeLog) -> any LabURLSession {
        guard let identifier = configuration.identifier else {
            let session = InProcessSession(configuration: configuration, delegate: delegate, delegateQueue: delegateQueue,
                                           phone: phone, exchangeLog: exchangeLog)
            adopt(session)
            return session
        }
        guard !identifier.isEmpty else {
            refuse("a background session needs an identifier: background(withIdentifier:) was given \"\"")
        }
        guard let delegate else {
            refuse("a background session needs a delegate: its events reach the app through it alone")
        }
        let session = BackgroundSession(identifier: identifier, configuration: configuration, delegate: delegate,
                                        delegateQueue: delegateQueue, app: self)
        adopt(session)
        return session
    }
}

extension Substring {
    func prepending(_ text: String) -> String { text + self }
}

