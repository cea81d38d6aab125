import Foundation
import LabVocabulary

/// What the kernel says this process has used so far.
public enum ProcessMetrics {
    /// Peak resident set size in bytes: `VmHWM` from /proc/self/status, else getrusage's maxrss.
    public static func peakRSSBytes() -> Int64 {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kibibytes = Int64(line.split(separator: " ").dropFirst().first ?? "") {
            return kibibytes * 1024
        }
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Int64(usage.ru_maxrss) * 1024
    }

    /// User plus system CPU time, in seconds.
    public static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

extension Duration {
    /// The duration in seconds, as the records and reports give times.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
