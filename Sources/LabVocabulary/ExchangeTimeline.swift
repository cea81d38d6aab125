extension ComparisonResults {
    /// One run's exchanges against time, and the bytes on disk under them: what the report draws
    /// for the scenario that shows a lesson's main defect.
    public struct ExchangeTimeline: Codable, Sendable, Equatable {
        /// Seconds since 1970 when the lesson's process started: the time axis's zero. The
        /// exchanges' own times are on the same clock.
        public var origin: Double
        /// The server's fault script as `--faults` writes it, one entry per attempt (the n-th
        /// GET plays the n-th); "" for none.
        public var faults: String
        public var exchanges: [HTTPExchange]
        /// The bytes under the run's output while it ran.
        public var disk: [DiskSample]
        /// What happened besides the requests (`LessonResult.events`); absent when nothing did.
        public var events: [RunEvent]?

        public init(origin: Double, faults: String, exchanges: [HTTPExchange], disk: [DiskSample], events: [RunEvent]? = nil) {
            self.origin = origin
            self.faults = faults
            self.exchanges = exchanges
            self.disk = disk
            self.events = events
        }
    }

    public struct DiskSample: Codable, Sendable, Equatable {
        /// Seconds since the process started.
        public var t: Double
        public var bytes: Int64

        public init(t: Double, bytes: Int64) {
            self.t = t
            self.bytes = bytes
        }
    }
}
