import Foundation
import LabKit
import LabPlatform
import Synchronization
import Testing

/// The platform seam on the system the tests run on: the values the lab records come out as
/// the kernel reports them.
struct PlatformTests {
    @Test func peakResidentMemoryIsBytesAndCoversWhatIsTouched() {
        let touched = 64 << 20
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: touched, alignment: 4096)
        defer { block.deallocate() }
        block.initializeMemory(as: UInt8.self, repeating: 1)
        // Now, then the peak: other tests' threads may allocate in between, never lowering the peak.
        let now = Platform.residentBytes(ofProcess: getpid())
        let peak = Platform.peakResidentBytes()
        #expect(peak >= Int64(touched), "peak \(peak) after touching \(touched) bytes")
        #expect(peak < 64 << 30, "peak \(peak): a unit off by 1,024 would show here")
        #expect(now.map { $0 >= Int64(touched) && $0 <= peak } == true, "now \(String(describing: now)), peak \(peak)")
    }

    /// A body held in shared memory whose pages the process has madvised away is still held:
    /// the kernel keeps them, and the lab's peak counts them (lesson 07's `body-in-memory`).
    @Test func sharedMemoryMadvisedAwayIsStillHeld() throws {
        let size = 64 << 20
        let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANON, -1, 0)
        let region = try #require(mapped == UnsafeMutableRawPointer(bitPattern: -1) ? nil : mapped)
        defer { munmap(region, size) }
        memset(region, 1, size)
        #expect(madvise(region, size, MADV_DONTNEED) == 0)
        let held = try #require(Platform.heldBytes(ofProcess: getpid()))
        let resident = try #require(Platform.residentBytes(ofProcess: getpid()))
        // Other tests' threads may allocate between the two reads: half the region is margin enough.
        #expect(held - resident >= Int64(size / 2), "held \(held), resident \(resident)")
    }

    /// Lesson 06 tells a parked GCD worker from a thread of its own by the queue whose work the
    /// thread runs, from inside the run loop that work runs too, and by the queues' work its stack
    /// holds, whatever queue's label it shows.
    @Test func aGlobalQueueWorkerIsToldFromAThreadOfItsOwn() {
        func seen(_ start: (@escaping @Sendable () -> Void) -> Void) -> String? {
            let label = SeenLabel()
            let done = DispatchSemaphore(value: 0)
            start {
                // In the run loop, from a timer, as a connection's callbacks run.
                let timer = Timer(timeInterval: 0, repeats: false) { _ in label.value.withLock { $0 = globalQueueWorker() } }
                RunLoop.current.add(timer, forMode: .default)
                RunLoop.current.run(until: Date(timeIntervalSinceNow: 0.05))
                done.signal()
            }
            done.wait()
            return label.value.withLock { $0 }
        }
        #expect(seen { DispatchQueue.global().async(execute: $0) } == "com.apple.root.default-qos")
        #expect(seen { DispatchQueue.global(qos: .background).async(execute: $0) } == "com.apple.root.background-qos")
        #expect(seen { Thread(block: $0).start() } == nil)
        #expect(seen { job in DispatchQueue.global().async { Thread(block: job).start() } } == nil)
        #expect(seen { job in Thread { DispatchQueue(label: "lab.inside").sync(execute: job) }.start() } == nil)
        #expect(seen { DispatchQueue(label: "lab.own").async(execute: $0) } == nil)
        // A global queue's worker that enters a queue of the app's own is still that worker.
        #expect(seen { job in DispatchQueue.global().async { DispatchQueue(label: "lab.loop").sync(execute: job) } }
            == "'lab.loop', inside a GCD worker's work")
    }

    @Test func threadIDsTellThreadsApartAndSeeThemEnd() {
        let main = Platform.currentThreadID
        #expect(main > 0)
        let other = LockedBox(0)
        let thread = Thread { other.set(Platform.currentThreadID) }
        thread.start()
        while other.get() == 0 { usleep(1_000) }
        #expect(other.get() != main)
        #expect(!Platform.threadHasEnded(main))
        #expect(ThreadCensus.exited([other.get()]))
    }

    /// How a Mac's `swiftpm-testing-helper` names the test bundle, read on any system: the
    /// products folder is the one holding the `.xctest`.
    @Test func theTestBundlePathNamesTheProductsFolder() {
        let binary = "/Users/ada/lab/.build/arm64-apple-macosx/debug/DownloadLabPackageTests.xctest/Contents/MacOS/DownloadLabPackageTests"
        #expect(Platform.productsFolder(testBundlePathIn: ["swiftpm-testing-helper", "--test-bundle-path", binary, "--testing-library",
                                                           "swift-testing"])?.path == "/Users/ada/lab/.build/arm64-apple-macosx/debug")
        #expect(Platform.productsFolder(testBundlePathIn: ["xctest", "/x/Tests.xctest"]) == nil)
        #expect(Platform.productsFolder(testBundlePathIn: ["helper", "--test-bundle-path"]) == nil)
        #expect(Platform.productsFolder(testBundlePathIn: ["helper", "--test-bundle-path", "/no/bundle/here"]) == nil)
    }

    @Test func childrenAndTheirEnd() throws {
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["30"]
        try sleeper.run()
        let pid = sleeper.processIdentifier
        #expect(Platform.children(of: getpid()).contains(pid))
        #expect(Platform.isRunning(pid))
        kill(pid, SIGKILL)  // SIGTERM may be blocked in a child of the test runner
        sleeper.waitUntilExit()
        #expect(!Platform.isRunning(pid))
    }

    /// `lab doctor`'s toolchain check: a version meets the floor from its first differing number.
    @Test func aToolchainMeetsItsFloorFromItsVersion() {
        let floor = ToolchainFloor(swift: [6, 1], shownAs: "Xcode 16.3 (Swift 6.1)")
        for version in ["6.1", "6.1.0", "6.1.2", "6.2-dev", "6.10", "7.0"] { #expect(floor.isMet(by: version), "\(version)") }
        for version in ["6.0.3", "6", "5.10.1", "", "dev"] { #expect(!floor.isMet(by: version), "\(version)") }
    }

    /// The README's prerequisites name the floor that `lab doctor` checks, on every system, and
    /// the manifest asks for it: the toolchain this suite runs on is no older.
    @Test func theReadmeAndTheManifestStateTheToolchainFloor() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let floor = Platform.minimumToolchain
        #expect(readme.contains(floor.shownAs + " or later"), "README.md names no \(floor.shownAs) or later")
        let numbers = floor.swift.map(String.init).joined(separator: ".")
        #expect(floor.shownAs.contains("Swift " + numbers))
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        #expect(manifest.hasPrefix("// swift-tools-version: \(numbers)\n"), "\(manifest.prefix(60))")
    }

    @Test func theProductsFolderHoldsTheLab() {
        #expect(FileManager.default.isExecutableFile(atPath: Platform.productsFolder.appendingPathComponent("lab-measure").path))
    }

    @Test func aFolderThatTakesNoFilesRefusesEvenRoot() {
        let file = Platform.folderThatTakesNoFiles + "/download-lab-probe"
        #expect(!FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
        #expect(!FileManager.default.fileExists(atPath: file))
    }
}

/// The queue a thread ran for, written by that thread and read by the test's.
private final class SeenLabel: Sendable {
    let value = Mutex<String?>("not seen")
}

/// A value written by one thread and read by another.
private final class LockedBox: @unchecked Sendable {
    // @unchecked: every access takes `lock`.
    private let lock = NSLock()
    private var value: Int
    init(_ value: Int) { self.value = value }
    func set(_ newValue: Int) { lock.withLock { value = newValue } }
    func get() -> Int { lock.withLock { value } }
}
