/// What a run's progress reports said, in its record: a check counts them from outside the code
/// that made them, as it counts the bytes on disk.
public struct ProgressRecord: Codable, Sendable, Equatable {
    /// Every report the code made (`run.progress.update`).
    public var reports: Int
    /// Those that came with a total above zero, and so as a percentage.
    public var reportsWithTotal: Int
    /// The largest percentage reported; nil when no report had a total.
    public var highestPercent: Double?

    public init(reports: Int = 0, reportsWithTotal: Int = 0, highestPercent: Double? = nil) {
        self.reports = reports
        self.reportsWithTotal = reportsWithTotal
        self.highestPercent = highestPercent
    }

    /// Adds one report of `received` bytes out of `expected` (zero or less: unknown).
    public mutating func add(received: Int64, expected: Int64) {
        reports += 1
        guard expected > 0 else { return }
        reportsWithTotal += 1
        let percent = Double(received) * 100 / Double(expected)
        highestPercent = max(highestPercent ?? percent, percent)
    }
}
