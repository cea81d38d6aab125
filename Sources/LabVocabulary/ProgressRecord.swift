/// What a run's progress reports said, in its record: a check counts them from outside the code
/// that made them, as it counts the bytes on disk.
public struct ProgressRecord: Codable, Sendable, Equatable {
    /// Every report the code made (`run.progress.update`).
    public var reports: Int
    /// Those that came with a total above zero, and so as a percentage.
    public var reportsWithTotal: Int
    /// The largest percentage reported; nil when no report had a total.
    public var highestPercent: Double?
    /// The totals reported, each once, the first `keptTotals` of them: a progress bar held under
    /// 100% against the wrong total is still wrong.
    public var totals: [Int64]
    static let keptTotals = 4

    public init(reports: Int = 0, reportsWithTotal: Int = 0, highestPercent: Double? = nil, totals: [Int64] = []) {
        self.reports = reports
        self.reportsWithTotal = reportsWithTotal
        self.highestPercent = highestPercent
        self.totals = totals
    }

    /// Records written before `totals` existed read as having none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        reports = try container.decode(Int.self, forKey: .reports)
        reportsWithTotal = try container.decode(Int.self, forKey: .reportsWithTotal)
        highestPercent = try container.decodeIfPresent(Double.self, forKey: .highestPercent)
        totals = try container.decodeIfPresent([Int64].self, forKey: .totals) ?? []
    }

    /// Adds one report of `received` bytes out of `expected` (zero or less: unknown).
    public mutating func add(received: Int64, expected: Int64) {
        reports += 1
        guard expected > 0 else { return }
        reportsWithTotal += 1
        if totals.count < Self.keptTotals, !totals.contains(expected) { totals.append(expected) }
        let percent = Double(received) * 100 / Double(expected)
        highestPercent = max(highestPercent ?? percent, percent)
    }
}
