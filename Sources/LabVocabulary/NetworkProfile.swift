/// A named network for `profile:<name>`: the bandwidth, round-trip latency and loss of a kind
/// of link, as others publish them. Apple's Network Link Conditioner has presets of the same
/// names, but their figures are not published; each figure here names its source.
public enum NetworkProfile: String, CaseIterable, Codable, Sendable, LabName {
    case edge
    case threeG = "3g"
    case lte
    case dsl
    case wifi

    /// Download bandwidth, in kbit/s (1 kbit = 1000 bits).
    public var kilobitsPerSecond: Int64 {
        switch self {
        case .edge: 250
        case .threeG: 750
        case .lte: 12_000
        case .dsl: 2_000
        case .wifi: 30_000
        }
    }

    /// Round-trip latency: the least time to the first byte of a response.
    public var latencyMilliseconds: Int64 {
        switch self {
        case .edge: 300
        case .threeG: 250
        case .lte: 70
        case .dsl: 70
        case .wifi: 40
        }
    }

    /// Packet loss, in percent.
    public var lossPercent: Double {
        switch self {
        case .edge: 1.5
        case .threeG: 1.5
        case .lte: 0
        case .dsl: 2
        case .wifi: 0.2
        }
    }

    /// Where the figures come from.
    public var source: String {
        switch self {
        case .edge: "comcast's network condition profiles, EDGE (good)"
        case .threeG: "comcast's network condition profiles, 3G/HSDPA (good)"
        case .lte: "WebPageTest's connectivity presets, LTE"
        case .dsl: "comcast's network condition profiles, DSL (poor)"
        case .wifi: "comcast's network condition profiles, WIFI (good)"
        }
    }

    public var bytesPerSecond: Int64 { kilobitsPerSecond * 1000 / 8 }

    /// The file `lab compare` downloads over this link: the largest power of two that the
    /// bandwidth carries in 4 s (256 KiB over 3g, 8 MiB over wifi), so a run takes seconds.
    public var compareSize: Int64 {
        var size: Int64 = 1 << 10
        while size * 2 <= 4 * bytesPerSecond { size *= 2 }
        return size
    }

    /// "3g 750 kbit/s, 250 ms, 1.5% loss".
    public var summary: String {
        let loss = lossPercent == lossPercent.rounded() ? String(Int(lossPercent)) : String(lossPercent)
        return "\(rawValue) \(kilobitsPerSecond) kbit/s, \(latencyMilliseconds) ms, \(loss)% loss"
    }
}
