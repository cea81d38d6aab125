#if os(Linux)
import Foundation
import Glibc

// Linux: glibc and /proc (proc(5)). Read with Platform.swift, which says what each member is for.

extension Platform {
    /// Linux, whose Foundation is swift-corelibs-foundation: facts the lessons show about it hold here.
    public static let isLinux = true


    /// "Debian GNU/Linux 12 (bookworm), Linux 6.1.0-25-amd64": os-release(5)'s PRETTY_NAME, and
    /// the kernel's release from uname(2).
    public static func operatingSystem() -> String {
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let pretty = release.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        var names = utsname()
        let kernel = uname(&names) == 0
            ? withUnsafeBytes(of: names.release) { "Linux " + String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } : nil
        return [pretty, kernel].compactMap { $0 }.joined(separator: ", ")
    }

    /// Where the compiler finds C libraries' headers: /usr/include, its multiarch folder
    /// (Debian's `<machine>-linux-gnu`), and /usr/local/include.
    public static func systemHeaderFolders() -> [URL] {
        var names = utsname()
        let machine = uname(&names) == 0
            ? withUnsafeBytes(of: names.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } : "x86_64"
        return ["/usr/include", "/usr/include/\(machine)-linux-gnu", "/usr/local/include"].map { URL(fileURLWithPath: $0) }
    }

    // MARK: - Memory and CPU

    /// Peak resident set size in bytes: `VmHWM` from /proc/self/status, else getrusage's
    /// `ru_maxrss`, which Linux gives in KiB (getrusage(2)).
    public static func peakResidentBytes() -> Int64 {
        if let kibibytes = statusField("VmHWM", of: "self") { return kibibytes * 1024 }
        return residentBytes(fromMaxRSS: Int64(ownUsage().ru_maxrss))
    }

    /// Resident memory of a process now (`VmRSS`); nil once it is gone.
    public static func residentBytes(ofProcess pid: pid_t) -> Int64? {
        statusField("VmRSS", of: "\(pid)").map { $0 * 1024 }
    }

    /// Memory a process holds now: what is resident, with the shared memory it maps counted whole
    /// (a `MAP_SHARED | MAP_ANONYMOUS` region, a memfd, `/dev/shm`, System V): madvise's
    /// `MADV_DONTNEED` takes such pages out of `VmRSS`, yet the kernel keeps them, and a touch
    /// maps them back (madvise(2)). `RssShmem` is the part of `VmRSS` they already are (proc(5)).
    /// nil once the process is gone.
    public static func heldBytes(ofProcess pid: pid_t) -> Int64? {
        guard let resident = statusField("VmRSS", of: "\(pid)") else { return nil }
        let residentShared = statusField("RssShmem", of: "\(pid)") ?? 0
        guard let maps = try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8) else { return resident * 1024 }
        let mapped = sharedMemoryMappedBytes(maps: maps)
        return resident * 1024 - min(residentShared * 1024, mapped) + mapped
    }

    /// The bytes of the shared mappings of memory in a /proc/PID/maps text: its permissions end in
    /// `s`, and its file is memory's (`/dev/zero (deleted)` for an anonymous one), not a disk's.
    static func sharedMemoryMappedBytes(maps: String) -> Int64 {
        let memoryFiles = ["/dev/zero", "/memfd:", "/dev/shm/", "/SYSV"]
        var total: Int64 = 0
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasSuffix("s") else { continue }
            let file = fields.count > 5 ? fields[5].trimmingCharacters(in: .whitespaces) : ""
            guard file.isEmpty || memoryFiles.contains(where: file.hasPrefix) else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0] else { continue }
            total += Int64(bounds[1] - bounds[0])
        }
        return total
    }

    /// `ru_maxrss` (of getrusage or wait4) in bytes: Linux counts KiB.
    public static func residentBytes(fromMaxRSS maxRSS: Int64) -> Int64 { maxRSS * 1024 }

    static func ownUsage() -> rusage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return usage
    }

    /// A "Name:   1234 kB" line of /proc/<process>/status, in KiB.
    private static func statusField(_ name: String, of process: String) -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("\(name):") })
        else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int64($0) }
    }

    // MARK: - Processes

    /// The processes whose parent is `pid`, from the parent ids in /proc/N/stat.
    public static func children(of pid: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let child = pid_t(entry), let stat = processStat(child) else { return nil }
            return stat.parent == pid ? child : nil
        }
    }

    /// Whether `pid` is running: it exists and is not a zombie waiting to be reaped.
    public static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = processStat(pid) else { return false }
        return stat.state != "Z"
    }

    // The children this process started, by POSIX calls (ProgramsStarted decides). glibc
    // spells getrusage's `who` and sigaction's handler its own way.

    /// The peak memory of the children that ended and were waited for: getrusage(2)'s
    /// `RUSAGE_CHILDREN`; 0 when there were none, as no process runs in no memory.
    public static func endedChildrenPeakRSS() -> Int {
        var usage = rusage()
        return getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage) == 0 ? Int(usage.ru_maxrss) : 0
    }

    /// Whether children end unseen, by getrusage and waitid alike: SIGCHLD ignored, or
    /// `SA_NOCLDWAIT` (sigaction(2)).
    public static func childrenAreReapedUnseen() -> Bool {
        var action = sigaction()
        guard sigaction(SIGCHLD, nil, &action) == 0 else { return false }
        let handler = unsafeBitCast(action.__sigaction_handler.sa_handler, to: Int.self)
        return handler == unsafeBitCast(SIG_IGN, to: Int.self) || action.sa_flags & SA_NOCLDWAIT != 0
    }

    /// After "pid (name)" in /proc/N/stat: the state, then the parent's pid.
    private static func processStat(_ pid: pid_t) -> (state: Substring, parent: pid_t)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let nameEnd = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
        guard fields.count > 1, let parent = pid_t(fields[1]) else { return nil }
        return (fields[0], parent)
    }

    /// The folder of the running program, where SwiftPM also puts the package's other products
    /// (for the test runner, the test binary: /proc/self/exe through `Bundle.main`).
    public static var productsFolder: URL {
        Bundle.main.executableURL!.resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// What `posix_spawn_file_actions_init` takes: a struct on glibc.
    public typealias SpawnFileActions = posix_spawn_file_actions_t
    public static func makeSpawnFileActions() -> SpawnFileActions { posix_spawn_file_actions_t() }

    /// What `posix_spawnattr_init` takes: a struct on glibc.
    public typealias SpawnAttributes = posix_spawnattr_t
    public static func makeSpawnAttributes() -> SpawnAttributes { posix_spawnattr_t() }

    /// The processor's name, from /proc/cpuinfo.
    public static func cpuModel() -> String? {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let line = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
        return line?.split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces)
    }

    // MARK: - Threads

    /// Names the calling thread. Foundation's `Thread.current.name` setter is unreliable on
    /// Linux: a name set before `start()` is dropped, one set first thing inside the thread can
    /// be dropped too (it races with `start()`), and one over 15 bytes is refused. The kernel
    /// takes the name from /proc instead.
    public static func nameCurrentThread(_ name: String) {
        try? name.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
    }

    /// The kernel's id for the calling thread: /proc/thread-self links to <pid>/task/<tid>.
    public static var currentThreadID: Int {
        let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
        return Int(link.split(separator: "/").last ?? "") ?? -1
    }

    /// Whether the thread with this kernel id has ended.
    public static func threadHasEnded(_ id: Int) -> Bool {
        !FileManager.default.fileExists(atPath: "/proc/self/task/\(id)")
    }

    // MARK: - Files and sockets

    /// A folder that exists and in which no one, root included, can create a file or a folder
    /// (procfs answers ENOENT): for tests of what a lesson does when its disk refuses it.
    public static let folderThatTakesNoFiles = "/proc/self"

    /// write(2), as glibc spells it (a type's own `write` method would hide the free function).
    public static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        Glibc.write(descriptor, bytes.baseAddress, bytes.count)
    }

    /// `SOCK_STREAM`, which glibc declares as an enum case.
    public static let streamSocket = Int32(SOCK_STREAM.rawValue)

    /// Shuts down every connection of this process to `addresses` at `port` that is receiving:
    /// bytes wait to be read, or some arrived in the last 100 ms. This is the cancel that
    /// Foundation on Linux lacks (see `URLSessionTask.cancelAtOnce()`): its `cancel()` lands only
    /// once the body has ended. Returns how many connections were shut down.
    public static func shutDownReceivingConnections(to addresses: Set<String>, port: Int) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var shutDown = 0
        for descriptor in descriptors.compactMap({ Int32($0) }) {
            guard let peer = Sockets.peerAddress(of: descriptor), peer.port == port, addresses.contains(peer.address),
                  isReceiving(descriptor)
            else { continue }
            if shutdown(descriptor, Int32(SHUT_RDWR)) == 0 { shutDown += 1 }
        }
        return shutDown
    }

    /// A transfer slower than this is not found, and needs nothing: its work queue falls idle
    /// between chunks, so a plain cancel lands at once.
    static let recentMilliseconds: UInt32 = 100

    private static func isReceiving(_ descriptor: Int32) -> Bool {
        var unread: Int32 = 0
        if ioctl(descriptor, UInt(FIONREAD), &unread) == 0, unread > 0 { return true }
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return false }
        return info.tcpi_last_data_recv < recentMilliseconds
    }
}
#endif
