import CLabPlatform
import Foundation

// Download Lab's one platform seam. Everything the lab needs from the operating system that
// Linux and Apple's systems spell differently is a member of `Platform`, implemented once in
// Linux.swift (glibc, /proc) and once in Darwin.swift (libc, Mach, libproc). Every other file is
// one code path. `.ci/portability-check` fails when a Linux-only name appears outside Linux.swift.

#if !os(Linux) && !canImport(Darwin)
#error("Download Lab builds on Linux and on Apple's systems (macOS) only")
#endif

public enum Platform {}

/// The oldest toolchain the lab is for on a system, as the README states it.
public struct ToolchainFloor: Sendable {
    /// Its Swift version's numbers: [6, 3].
    public let swift: [Int]
    /// How the README names it: "Swift 6.3".
    public let shownAs: String

    public init(swift: [Int], shownAs: String) {
        self.swift = swift
        self.shownAs = shownAs
    }

    /// Whether `version` ("6.1.2", "6.3-dev") is this one or later.
    public func isMet(by version: String) -> Bool {
        let numbers = version.prefix { $0.isNumber || $0 == "." }.split(separator: ".").compactMap { Int($0) }
        guard !numbers.isEmpty else { return false }
        for (have, need) in zip(numbers + Array(repeating: 0, count: max(0, swift.count - numbers.count)), swift) where have != need {
            return have > need
        }
        return true
    }
}

extension Platform {
    /// The toolchain the README's prerequisites ask for, on every system: the one CI builds and
    /// tests with (`swift-tools-version: 6.3` in Package.swift). An older one is not compiled
    /// anywhere, so it is not promised: Sendable and concurrency checking differ between compilers.
    public static let minimumToolchain = ToolchainFloor(swift: [6, 3], shownAs: "Swift 6.3")
}

extension Platform {
    /// The label of the dispatch queue whose work the calling thread is running: a worker of
    /// GCD's global queue says "com.apple.root.default-qos" (or another QoS), even inside a run
    /// loop it runs from that work; a thread of its own says the default overcommit root queue's.
    /// libdispatch's `dispatch_queue_get_label(DISPATCH_CURRENT_QUEUE_LABEL)`, the same source on
    /// both systems (seen on Linux).
    public static var currentDispatchQueueLabel: String { String(cString: lab_current_dispatch_queue_label()) }

    /// On a thread of GCD's pool, how many queues' work its stack runs, one inside another: 1 for
    /// the work the pool gave it, 2 once that work has entered another queue's (a `sync` on a queue
    /// of the app's own, whose label the thread then shows); 0 on a thread GCD did not make (a
    /// `Thread`, the main thread). The stack's frames by `backtrace` and `dladdr`, on both systems
    /// (seen on Linux: `_dispatch_worker_thread` under every worker, `Thread.main` under a Thread).
    public static var dispatchWorkNesting: Int { Int(lab_dispatch_work_nesting()) }

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

extension Platform {
    /// The products folder of a test run that SwiftPM hosts in `swiftpm-testing-helper`, from its
    /// `--test-bundle-path <products>/X.xctest/Contents/MacOS/X` argument: the helper loads the
    /// bundle with `dlopen`, so `Bundle.allBundles` has no `.xctest` (swift-package-manager's
    /// Sources/swiftpm-testing-helper/Entrypoint.swift; its own tests read the argument the same
    /// way since #8685, Sources/_InternalTestSupport/Toolchain.swift). Nil without the argument.
    public static func productsFolder(testBundlePathIn arguments: [String]) -> URL? {
        guard let flag = arguments.firstIndex(of: "--test-bundle-path"), flag + 1 < arguments.count else { return nil }
        var folder = URL(fileURLWithPath: arguments[flag + 1]).standardizedFileURL
        while folder.pathExtension != "xctest" {
            guard folder.pathComponents.count > 1 else { return nil }
            folder.deleteLastPathComponent()
        }
        return folder.deletingLastPathComponent()
    }
}

