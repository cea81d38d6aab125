import Foundation
import LabPlatform
import LabVocabulary

/// What the kernel says this process has used so far (from the platform seam).
public enum ProcessMetrics {
    /// Peak resident set size in bytes.
    public static func peakRSSBytes() -> Int64 { Platform.peakResidentBytes() }

    /// User plus system CPU time, in seconds.
    public static func cpuSeconds() -> Double { Platform.cpuSeconds() }
}

extension Duration {
    /// The duration in seconds, as the records and reports give times.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
