extension ComparisonResults {
    /// One download of the connections comparison (`lab compare`, when lesson 11 runs): lesson
    /// 11's corrected variant, aria2c or curl fetching one file over `connections` connections at
    /// once, from the lab server pacing each connection as a CDN does.
    public struct ConnectionsRun: Codable, Sendable, Equatable {
        public var program: ConnectionsProgram
        public var server: ConnectionsServer
        public var connections: Int
        public var sizeBytes: Int64
        /// The server's pace of each connection, in bytes per second.
        public var paceBytesPerSecond: Int64
        public var wallSeconds: Double
        public var throughputBytesPerSecond: Double
        public var peakRSSBytes: Int64
        /// The body bytes the server sent beyond the file's size: ranges fetched twice, refusals.
        /// Absent for nginx, whose log the lab does not read.
        public var fetchedTwiceBytes: Int64?

        public init(program: ConnectionsProgram, server: ConnectionsServer, connections: Int, sizeBytes: Int64, paceBytesPerSecond: Int64,
                    wallSeconds: Double, peakRSSBytes: Int64, fetchedTwiceBytes: Int64?) {
            self.program = program
            self.server = server
            self.connections = connections
            self.sizeBytes = sizeBytes
            self.paceBytesPerSecond = paceBytesPerSecond
            self.wallSeconds = wallSeconds
            throughputBytesPerSecond = Double(sizeBytes) / max(wallSeconds, 1e-6)
            self.peakRSSBytes = peakRSSBytes
            self.fetchedTwiceBytes = fetchedTwiceBytes
        }
    }

    /// The connection counts the comparison tries, and each program's way of asking for them.
    public static let connectionCounts = [1, 2, 4, 8]
}

/// The servers of the connections comparison: each paces every connection to the same rate.
public enum ConnectionsServer: String, Codable, Sendable, CaseIterable {
    /// The embedded server, `throttle` on every GET.
    case lab = "lab-server"
    /// nginx with `limit_rate`; left out where it is not installed.
    case nginx
}

/// The programs of the connections comparison.
public enum ConnectionsProgram: String, Codable, Sendable, CaseIterable {
    case lesson = "lesson-11-segmented"
    /// The download manager: `aria2c -x N -s N`.
    case aria2c
    /// One stream, the floor every split must beat.
    case curl

    /// Whether the program splits a file over several connections; curl runs once, on one.
    public var splits: Bool { self != .curl }
}
