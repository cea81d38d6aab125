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
        /// The file the run had to end with, in bytes.
        public var sizeBytes: Int64?

        public init(origin: Double, faults: String, exchanges: [HTTPExchange], disk: [DiskSample], events: [RunEvent]? = nil,
                    sizeBytes: Int64? = nil) {
            self.origin = origin
            self.faults = faults
            self.exchanges = exchanges
            self.disk = disk
            self.events = events
            self.sizeBytes = sizeBytes
        }

        /// The same, with no request's or response's headers: what a picture needs, smaller.
        public var withoutHeaders: Self {
            var timeline = self
            for index in timeline.exchanges.indices { (timeline.exchanges[index].requestHeaders, timeline.exchanges[index].responseHeaders) = (nil, nil) }
            return timeline
        }

        /// Whether a timeline from elsewhere (a class submission) stays within what a page draws:
        /// so many exchanges, samples and events, and every text within `longestText`.
        public func isWithin(exchanges mostExchanges: Int, samples mostSamples: Int, longestText: Int) -> Bool {
            guard exchanges.count <= mostExchanges, disk.count <= mostSamples, (events?.count ?? 0) <= mostExchanges, faults.count <= longestText
            else { return false }
            let texts = exchanges.flatMap { exchange in
                [exchange.url, exchange.range, exchange.ifRange, exchange.ifNoneMatch, exchange.ifModifiedSince, exchange.contentRange,
                 exchange.etag, exchange.reprDigestSHA256, exchange.error].compactMap { $0 }
                    + (exchange.requestHeaders ?? []).flatMap { [$0.name, $0.value] } + (exchange.responseHeaders ?? []).flatMap { [$0.name, $0.value] }
            } + (events ?? []).map(\.what)
            return texts.allSatisfy { $0.count <= longestText }
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
