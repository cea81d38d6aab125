#if canImport(Darwin)
import CLabPlatform
import Darwin
import Foundation

// Apple's systems: libc, Mach and libproc. Not built on a Mac yet: each call follows the header or
// man page named beside it, as published in apple-oss-distributions (xnu, libpthread, Libc).

extension Platform {
    /// Apple's systems, whose Foundation is Apple's own: the lessons' Linux facts do not hold here.
    public static let isLinux = false


    /// "macOS 15.2.0 (arm64)": Foundation's `operatingSystemVersion`, and the machine from uname(3).
    public static func operatingSystem() -> String {
        let version = ProcessInfo.processInfo.operatingSystemVersion
        var names = utsname()
        let machine = uname(&names) == 0
            ? withUnsafeBytes(of: names.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } : "unknown"
        return "macOS \(version.majorVersion).\(version.minorVersion).\(version.patchVersion) (\(machine))"
    }

    /// Where the compiler finds C libraries' headers: the active SDK's usr/include, as
    /// `xcrun --show-sdk-path` names it (xcrun(1)); Xcode's and the Command Line Tools' alike.
    public static func systemHeaderFolders() -> [URL] {
        let xcrun = Process()
        xcrun.executableURL = URL(fileURLWithPath: "/usr/bin/xcrun")
        xcrun.arguments = ["--show-sdk-path"]
        let output = Pipe()
        xcrun.standardOutput = output
        xcrun.standardError = FileHandle.nullDevice
        guard (try? xcrun.run()) != nil else { return [] }
        let path = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        xcrun.waitUntilExit()
        guard xcrun.terminationStatus == 0, path.hasPrefix("/") else { return [] }
        return [URL(fileURLWithPath: path).appendingPathComponent("usr/include")]
    }

    // MARK: - Memory and CPU

    /// Peak resident set size in bytes: getrusage's `ru_maxrss`, which Darwin gives in bytes
    /// (xnu bsd/man/man2/getrusage.2).
    public static func peakResidentBytes() -> Int64 {
        residentBytes(fromMaxRSS: Int64(ownUsage().ru_maxrss))
    }

    /// Resident memory of a process now; nil once it is gone. libproc.h `proc_pid_rusage`,
    /// `rusage_info_v2.ri_resident_size` (xnu bsd/sys/resource.h).
    public static func residentBytes(ofProcess pid: pid_t) -> Int64? {
        var usage = rusage_info_v2()
        let result = withUnsafeMutablePointer(to: &usage) {
            $0.withMemoryRebound(to: rusage_info_t?.self, capacity: 1) { proc_pid_rusage(pid, RUSAGE_INFO_V2, $0) }
        }
        return result == 0 ? Int64(usage.ri_resident_size) : nil
    }

    /// Memory a process holds now: its physical footprint, what iOS's memory limit counts against
    /// an app (libproc.h `proc_pid_rusage`, `rusage_info_v2.ri_phys_footprint`; xnu
    /// bsd/sys/resource.h). Whether it keeps shared memory an app has madvised away, as Linux's
    /// count here does, has not been measured on a Mac. nil once the process is gone.
    public static func heldBytes(ofProcess pid: pid_t) -> Int64? {
        var usage = rusage_info_v2()
        let result = withUnsafeMutablePointer(to: &usage) {
            $0.withMemoryRebound(to: rusage_info_t?.self, capacity: 1) { proc_pid_rusage(pid, RUSAGE_INFO_V2, $0) }
        }
        return result == 0 ? Int64(usage.ri_phys_footprint) : nil
    }

    /// `ru_maxrss` (of getrusage or wait4) in bytes: Darwin already counts bytes.
    public static func residentBytes(fromMaxRSS maxRSS: Int64) -> Int64 { maxRSS }

    static func ownUsage() -> rusage {
        var usage = rusage()
        getrusage(RUSAGE_SELF, &usage)
        return usage
    }

    // MARK: - Processes

    /// The processes whose parent is `pid`. libproc.h `proc_listchildpids`, which returns how
    /// many pids it wrote (Libc darwin/libproc.c).
    public static func children(of pid: pid_t) -> [pid_t] {
        var pids = [pid_t](repeating: 0, count: 1024)
        let count = proc_listchildpids(pid, &pids, Int32(pids.count * MemoryLayout<pid_t>.stride))
        return count > 0 ? Array(pids.prefix(Int(count))) : []
    }

    // The children this process started, by POSIX calls (ProgramsStarted decides). Darwin
    // names the handler `__sigaction_u.__sa_handler` (xnu bsd/sys/signal.h).

    /// The peak memory of the children that ended and were waited for: getrusage(2)'s
    /// `RUSAGE_CHILDREN`; 0 when there were none, as no process runs in no memory.
    public static func endedChildrenPeakRSS() -> Int {
        var usage = rusage()
        return getrusage(RUSAGE_CHILDREN, &usage) == 0 ? Int(usage.ru_maxrss) : 0
    }

    /// Whether children end unseen, by getrusage and waitid alike: SIGCHLD ignored, or
    /// `SA_NOCLDWAIT` (sigaction(2)).
    public static func childrenAreReapedUnseen() -> Bool {
        var action = sigaction()
        guard sigaction(SIGCHLD, nil, &action) == 0 else { return false }
        let handler = unsafeBitCast(action.__sigaction_u.__sa_handler, to: Int.self)
        return handler == unsafeBitCast(SIG_IGN, to: Int.self) || action.sa_flags & SA_NOCLDWAIT != 0
    }

    /// Whether `pid` is running: it exists and is not a zombie. libproc.h `proc_pidinfo` with
    /// `PROC_PIDTBSDINFO`; `pbi_status` 5 is `SZOMB` (xnu bsd/sys/proc.h).
    public static func isRunning(_ pid: pid_t) -> Bool {
        var info = proc_bsdinfo()
        let size = Int32(MemoryLayout<proc_bsdinfo>.size)
        guard proc_pidinfo(pid, PROC_PIDTBSDINFO, 0, &info, size) == size else { return false }
        return info.pbi_status != 5
    }

    /// The folder holding the package's products. A program finds it beside itself. Under a Mac's
    /// test runners `Bundle.main` is the runner: `xctest` loads the `.xctest` bundle through
    /// NSBundle (as swift-tools-support-core finds it), and `swiftpm-testing-helper`, which runs
    /// Swift Testing, names it in `--test-bundle-path`.
    public static var productsFolder: URL {
        if let tests = Bundle.allBundles.first(where: { $0.bundleURL.pathExtension == "xctest" }) {
            return tests.bundleURL.resolvingSymlinksInPath().deletingLastPathComponent()
        }
        if let folder = productsFolder(testBundlePathIn: ProcessInfo.processInfo.arguments) {
            return folder.resolvingSymlinksInPath()
        }
        return Bundle.main.executableURL!.resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// What `posix_spawn_file_actions_init` takes: an opaque pointer on Darwin (xnu spawn.h).
    public typealias SpawnFileActions = posix_spawn_file_actions_t?
    public static func makeSpawnFileActions() -> SpawnFileActions { nil }

    /// What `posix_spawnattr_init` takes: an opaque pointer on Darwin (xnu spawn.h).
    public typealias SpawnAttributes = posix_spawnattr_t?
    public static func makeSpawnAttributes() -> SpawnAttributes { nil }

    /// The processor's name: sysctl `machdep.cpu.brand_string` (sysctlbyname(3)).
    public static func cpuModel() -> String? {
        var size = 0
        guard sysctlbyname("machdep.cpu.brand_string", nil, &size, nil, 0) == 0, size > 0 else { return nil }
        var name = [CChar](repeating: 0, count: size)
        guard sysctlbyname("machdep.cpu.brand_string", &name, &size, nil, 0) == 0 else { return nil }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    // MARK: - Threads

    /// Names the calling thread; Foundation's setter calls `pthread_setname_np` on Darwin.
    public static func nameCurrentThread(_ name: String) {
        Thread.current.name = name
    }

    /// The kernel's id for the calling thread: `pthread_threadid_np` (libpthread pthread.h).
    public static var currentThreadID: Int {
        var id: UInt64 = 0
        pthread_threadid_np(nil, &id)
        return Int(truncatingIfNeeded: id)
    }

    /// Whether the thread with this id has ended: none of the task's threads has it
    /// (`task_threads`, `thread_info` with `THREAD_IDENTIFIER_INFO`, xnu osfmk/mach/thread_info.h).
    public static func threadHasEnded(_ id: Int) -> Bool {
        var threads: thread_act_array_t?
        var count: mach_msg_type_number_t = 0
        guard task_threads(lab_mach_task_self(), &threads, &count) == KERN_SUCCESS, let threads else { return false }
        defer {
            for index in 0..<Int(count) { mach_port_deallocate(lab_mach_task_self(), threads[index]) }
            vm_deallocate(lab_mach_task_self(), vm_address_t(UInt(bitPattern: threads)),
                          vm_size_t(Int(count) * MemoryLayout<thread_t>.stride))
        }
        for index in 0..<Int(count) {
            var info = thread_identifier_info_data_t()
            var infoCount = mach_msg_type_number_t(MemoryLayout<thread_identifier_info_data_t>.size / MemoryLayout<natural_t>.size)
            let result = withUnsafeMutablePointer(to: &info) {
                $0.withMemoryRebound(to: integer_t.self, capacity: Int(infoCount)) {
                    thread_info(threads[index], thread_flavor_t(THREAD_IDENTIFIER_INFO), $0, &infoCount)
                }
            }
            if result == KERN_SUCCESS, info.thread_id == UInt64(id) { return false }
        }
        return true
    }

    // MARK: - Files and sockets

    /// A folder that exists and in which no one, root included, can create a file or a folder:
    /// /usr is on the read-only system volume (EROFS) since macOS 10.15.
    public static let folderThatTakesNoFiles = "/usr"

    /// write(2).
    public static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        Darwin.write(descriptor, bytes.baseAddress, bytes.count)
    }

    /// `SOCK_STREAM`, a plain integer macro on Darwin (xnu bsd/sys/socket.h).
    public static let streamSocket = SOCK_STREAM

    /// Nothing to shut down: on Apple's Foundation `cancel()` stops the transfer at once, so
    /// `URLSessionTask.cancelAtOnce()` needs no help from the socket layer.
    public static func shutDownReceivingConnections(to addresses: Set<String>, port: Int) -> Int { 0 }
}
#endif
