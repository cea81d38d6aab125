/// What lesson 09's phone saw of the app's life, in the run's record (`background`): how the
/// system treated the app, and how the app kept Apple's rules for background sessions. The
/// phone counts it outside the app's code: from the processes it ran and the transfer service's
/// files.
public struct BackgroundRecord: Codable, Sendable, Equatable {
    /// The life script that was played (`--life`).
    public var life: String
    /// Launches of the app: by the user, and by the system for a background session's events.
    public var launchesByUser = 0
    public var relaunchesForEvents = 0
    /// Times the system woke the suspended app for events.
    public var wakes = 0
    /// Download tasks the app gave the transfer service.
    public var backgroundTasks = 0
    /// Files the session handed to `didFinishDownloadingTo`.
    public var filesHandedOver = 0
    /// Launches for events after which events were still waiting: the session that would have
    /// received them was not made.
    public var launchesWithEventsLeft = 0
    /// Launches for events whose completion handler was never called, or not on the main queue,
    /// or before the session had delivered the events (`urlSessionDidFinishEvents`).
    public var handlersNeverCalled = 0
    public var handlersOffTheMainQueue = 0
    public var handlersBeforeTheEvents = 0
    /// The most background sessions the app made with one identifier in one launch.
    public var mostSessionsPerIdentifier = 0
    /// Force-quits played, and tasks the app started after one without a tap on Start.
    public var forceQuits = 0
    public var tasksStartedUnaskedAfterForceQuit = 0
    /// Tasks a force-quit cancelled whose end no session of the app had heard when an attempt
    /// ended: the launch after the force-quit made no session to hear it.
    public var forceQuitCancellationsUnheard = 0
    /// Times the transfer service died and the system started it again.
    public var serviceRestarts = 0
    /// The peak resident memory of the app's processes and of the service's, each the highest
    /// any one process reached (the run's `peakRSSBytes` is the phone's own).
    public var appPeakRSSBytes: Int64 = 0
    public var servicePeakRSSBytes: Int64 = 0

    public init(life: String) { self.life = life }

    /// Records written before a count existed read it as 0: every count but `life` may be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        life = try container.decode(String.self, forKey: .life)
        func count<T: Decodable & AdditiveArithmetic>(_ key: CodingKeys) throws -> T { try container.decodeIfPresent(T.self, forKey: key) ?? .zero }
        launchesByUser = try count(.launchesByUser)
        relaunchesForEvents = try count(.relaunchesForEvents)
        wakes = try count(.wakes)
        backgroundTasks = try count(.backgroundTasks)
        filesHandedOver = try count(.filesHandedOver)
        launchesWithEventsLeft = try count(.launchesWithEventsLeft)
        handlersNeverCalled = try count(.handlersNeverCalled)
        handlersOffTheMainQueue = try count(.handlersOffTheMainQueue)
        handlersBeforeTheEvents = try count(.handlersBeforeTheEvents)
        mostSessionsPerIdentifier = try count(.mostSessionsPerIdentifier)
        forceQuits = try count(.forceQuits)
        tasksStartedUnaskedAfterForceQuit = try count(.tasksStartedUnaskedAfterForceQuit)
        forceQuitCancellationsUnheard = try count(.forceQuitCancellationsUnheard)
        serviceRestarts = try count(.serviceRestarts)
        appPeakRSSBytes = try count(.appPeakRSSBytes)
        servicePeakRSSBytes = try count(.servicePeakRSSBytes)
    }
}
