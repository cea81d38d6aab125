import Foundation

// Download Lab's one platform seam. Everything the lab needs from the operating system that
// Linux and Apple's systems spell differently is a member of `Platform`, implemented once in
// Linux.swift (glibc, /proc) and once in Darwin.swift (libc, Mach, libproc). Every other file is
// one code path. `.ci/portability-check` fails when a Linux-only name appears outside Linux.swift.

#if !os(Linux) && !canImport(Darwin)
#error("Download Lab builds on Linux and on Apple's systems (macOS) only")
#endif

public enum Platform {}

extension Platform {
    /// User plus system CPU time this process has used, in seconds.
    public static func cpuSeconds() -> Double {
        let usage = ownUsage()
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// `seconds` as a `timeval`, for `SO_RCVTIMEO` (`tv_usec` is an Int on Linux, an Int32 on Darwin).
    public static func socketTimeout(seconds: Double) -> timeval {
        timeval(tv_sec: Int(seconds), tv_usec: suseconds_t((seconds - seconds.rounded(.down)) * 1_000_000))
    }
}
