import Foundation
import LabFixtures
import LabKit
import LabPlatform
import LabServer
import LabVocabulary
import Synchronization
import TestThreads
import Testing

/// lesson-06-runloop-thread, run as a child process. The cases' facts are read from the story
/// the lesson tells (on stderr with `--json`), the download's from the JSON record.
@Suite(.serialized)
final class Lesson06Tests {
    static let executable = "lesson-06-runloop-thread"
    static let slice: Int64 = 64 << 10
    private let bench: TestBench
    var server: LabServer { bench.server }
    var directory: URL { bench.directory }

    init() throws { bench = try TestBench() }

    // MARK: - The default run

    /// One default run per variant (the cases, then the 64 MiB download with a drop at 40%),
    /// shared by the tests that read it: each run takes seconds, on purpose.
    private static let stories = Mutex<[Variant: ChildProcess.Finished]>([:])

    private func story(_ variant: Variant) throws -> ChildProcess.Finished {
        if let finished = Self.stories.withLock({ $0[variant] }) { return finished }
        let output = directory.appendingPathComponent("story-\(variant).bin")
        let finished = try ChildProcess.run(
            Self.executable, ["--json", "--variant", variant.rawValue, "--output", output.path])
        Self.stories.withLock { $0[variant] = finished }
        return finished
    }

    @Test(arguments: Variant.allCases)
    func defaultRunVerifies(variant: Variant) async throws {
        try await OffThePool.run {
            let finished = try story(variant)
            #expect(finished.status == 0, "\(finished.stderr)")
            let result = try finished.result()
            let fixture = Fixture(name: Self.executable, size: 64 << 20)
            #expect(result.variant == variant)
            #expect(result.way == RunLoopThreadWay.story.rawValue)
            #expect(result.outcome == .verified)
            #expect(result.actualSHA256 == fixture.sha256Hex())
            #expect(result.attempts == 2)
            #expect(result.resumedFrom.count == 1)

            // The cases asked for 64 KiB slices of the fault-free URL: the download's fault script
            // was left whole, and the resume itself fetched next to nothing twice.
            let slices = result.requests.filter { $0.range == "bytes=0-\(Self.slice - 1)" }
            #expect(slices.count == 4 + ProcessInfo.processInfo.activeProcessorCount + 1)
            #expect(slices.allSatisfy { $0.status == 206 && $0.bodyBytes == Self.slice && !$0.url.contains("faults=") })
            let slicesBytes = slices.reduce(0) { $0 + $1.bodyBytes }
            #expect(finished.stderr.contains("The cases fetched \(ByteFormat.grouped(slicesBytes)) bytes; the summary leaves them out"))
            #expect(result.bytesDownloadedAgain <= 64 << 10)
            #expect(result.bytesReceived <= (64 << 20) + (64 << 10))  // the 64 MiB download, not the slices
            let download = result.requests.filter { $0.url.contains("faults=drop:40pct,ok") }
            #expect(download.map(\.status) == [200, 206])
            #expect(download.last?.range == "bytes=\(result.resumedFrom[0])-")
        }
    }

    /// Case a: the thread started a connection and never ran its run loop.
    @Test(arguments: Variant.allCases)
    func threadThatNeverRunsItsRunLoopHearsNothing(variant: Variant) async throws {
        try await OffThePool.run {
            let line = try caseLine("case a:", in: story(variant))
            let counts = try numbers(in: line, #"case a: ([\d,]+) bytes delivered, ([\d,]+) callbacks in ([\d.]+) s"#)
            #expect(counts == [0, 0, 2])
            #expect(line.contains("thread 'lab.case-a'"))
            // The bytes did reach the process: only the delivery was missing.
            #expect(try numbers(in: line, #"\(([\d,]+) bytes had reached the process"#) == [Double(Self.slice)])
        }
    }

    /// Case c: with a delegate queue, the callbacks run on the queue, not on the starting thread.
    @Test(arguments: Variant.allCases)
    func delegateQueueNeedsNoRunLoop(variant: Variant) async throws {
        try await OffThePool.run {
            let line = try caseLine("case c:", in: story(variant))
            #expect(try numbers(in: line, #"case c: ([\d,]+) bytes delivered, ([\d,]+) callbacks"#).first == Double(Self.slice))
            #expect(line.contains("callbacks on queue 'lab.delegate-queue'"))
            let starter = try #require(try numbers(in: line, #"the starting thread 'lab.case-c' \(tid (\d+)\)"#).first)
            let callbackThreads = try allNumbers(in: line.components(separatedBy: "; the starting thread")[0], #"\(tid (\d+)\)"#)
            #expect(!callbackThreads.isEmpty)
            #expect(!callbackThreads.contains(starter))
        }
    }

    /// Case d: while the loop runs in the tracking mode, the default-mode connection gets nothing
    /// and the common-mode one gets its data.
    @Test(arguments: Variant.allCases)
    func onlyWhatIsScheduledInTheRunningModeIsServed(variant: Variant) async throws {
        try await OffThePool.run {
            let finished = try story(variant)
            let viaDefault = try caseLine("case d: default-mode", in: finished)
            #expect(try numbers(in: viaDefault, #"([\d,]+) bytes delivered while the loop ran in mode 'lab.tracking' for ([\d.]+) s, ([\d,]+) once it ran in the default mode again"#)
                == [0, 1, Double(Self.slice)])
            let viaCommon = try caseLine("case d: common-mode", in: finished)
            let duringTracking = try #require(try numbers(in: viaCommon, #"([\d,]+) bytes delivered while the loop ran in mode 'lab.tracking'"#).first)
            #expect(duringTracking > 0)
            #expect(duringTracking == Double(Self.slice))
            #expect(viaCommon.contains("on thread 'lab.case-d'"))
        }
    }

    /// Case e: one connection more than there are cores, at once. Parked in their run loops, GCD
    /// workers are lost to the global queue, and Linux's libdispatch adds a worker only once a
    /// second; dedicated threads cost GCD nothing.
    @Test(arguments: Variant.allCases)
    func parkedWorkersStarveTheGlobalQueue(variant: Variant) async throws {
        try await OffThePool.run {
            let line = try caseLine("case e:", in: story(variant))
            let count = ProcessInfo.processInfo.activeProcessorCount + 1
            #expect(line.hasPrefix("  case e: \(count) connections at once"))
            let bytes = try allNumbers(in: line, #"([\d,]+)(?: \+| bytes delivered)"#)
            #expect(bytes == Array(repeating: Double(Self.slice), count: count))
            let times = try numbers(in: line, #"all done after ([\d.]+) s; a block sent to the global queue meanwhile waited ([\d.]+) s"#)
            let (took, waited) = (try #require(times.first), try #require(times.last))
            switch variant {
            case .article:
                #expect(line.contains("each on a GCD worker parked in run()"))
                // A Linux fact: libdispatch there adds a worker about once a second (the catalogue's
                // `parked-workers` says why it is not expected on a Mac).
                guard Platform.isLinux else { return }
                #expect(waited >= 0.9, "\(line)")
                #expect(took >= 0.9, "\(line)")
            case .corrected:
                #expect(line.contains("each on a thread of its own"))
                #expect(waited < 0.5, "\(line)")
                #expect(took < 0.5, "\(line)")
            }
        }
    }

    /// `--way crowd`: the download and one more transfer per core at once. The article's parked
    /// workers leave GCD's global queue without a thread, and the lab calls the app frozen.
    @Test(arguments: Platform.isLinux ? Variant.allCases : [.corrected])  // the freeze is a Linux fact (`parked-workers`)
    func crowdedDownloadFreezesOnlyTheArticle(variant: Variant) async throws {
        try await OffThePool.run {
            let output = directory.appendingPathComponent("crowd-\(variant).bin")
            let finished = try ChildProcess.run(Self.executable, ["--way", "crowd", "--size", "4MiB", "--faults", "",
                                                                  "--json", "--variant", variant.rawValue, "--output", output.path])
            let result = try finished.result()
            // The bytes are right either way: what fails is the app around them.
            #expect(try FileDigest.sha256Hex(of: output) == Fixture(name: Self.executable, size: 4 << 20).sha256Hex())
            let waited = try numbers(in: finished.stderr, #"a job sent to the global queue meanwhile waited ([\d.]+) s"#)
            switch variant {
            case .article:
                #expect(finished.status == ExitStatus.unresponsive.rawValue, "\(finished.stderr)")
                #expect(result.outcome == .unresponsive)
                #expect(result.error?.message.hasPrefix("the app froze: a job sent to GCD's global queue waited ") == true)
                #expect(try #require(waited.first) >= 0.5)
            case .corrected:
                #expect(finished.status == 0, "\(finished.stderr)")
                #expect(result.outcome == .verified)
                #expect(try #require(waited.first) < 0.5)
            }
        }
    }

    /// Case b, the download: the corrected thread exits after each attempt; the article's
    /// callbacks run on a GCD worker.
    @Test(arguments: Variant.allCases)
    func downloadThreadEndsWithTheTransfer(variant: Variant) async throws {
        try await OffThePool.run {
            let stderr = try story(variant).stderr
            let callbackLines = stderr.split(separator: "\n").filter { $0.hasPrefix("  case b: ") && $0.contains(" callbacks, on thread ") }
            #expect(callbackLines.count == 2)  // one per attempt
            let exits = stderr.split(separator: "\n").filter { $0.contains("left its run loop") }
            switch variant {
            case .corrected:
                #expect(callbackLines.allSatisfy { $0.hasSuffix("on thread 'lab.download' (tid \(tid(in: $0)))") })
                #expect(exits.count == 2)
                #expect(exits.allSatisfy { $0.hasPrefix("  case b: thread 'lab.download'") && $0.hasSuffix("(and exited)") })
            case .article:
                #expect(callbackLines.allSatisfy { !$0.contains("'lab.download'") && !$0.contains("'main'") })
                #expect(exits.isEmpty)
            }
        }
    }

    /// The default run exactly as `swift run lesson-06-runloop-thread` does it: story on stdout.
    @Test func noArgumentsTellsTheWholeStory() async throws {
        try await OffThePool.run {
            let finished = try ChildProcess.run(Self.executable, [])
            #expect(finished.status == 0, "\(finished.stderr)")
            #expect(finished.stderr.isEmpty)
            let story = finished.stdout
            #expect(story.hasPrefix("lesson-06-runloop-thread: A connection on a background thread, and its run loop [corrected, story]\n"))
            let order = ["case a:", "case c:", "case d: default-mode", "case d: common-mode", "case e:",
                         "case b: the download itself", "✗ attempt 1 failed", "↻ attempt 2: Resume", "✔ verified"]
            let positions = order.map { story.range(of: $0)?.lowerBound }
            #expect(positions.allSatisfy { $0 != nil }, "\(story)")
            #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
            #expect(story.contains("Range: bytes=26843545-  If-Range: \""))
            #expect(story.contains("resumed from      byte 26,843,545"))
        }
    }

    // MARK: - One way at a time

    /// Case c as the download itself: callbacks on an OperationQueue, verified.
    @Test(arguments: Variant.allCases)
    func delegateQueueDownloadVerifies(variant: Variant) async throws {
        try await OffThePool.run {
            let output = directory.appendingPathComponent("queue-\(variant).bin")
            let finished = try ChildProcess.run(
                Self.executable, ["--json", "--way", "delegate-queue", "--variant", variant.rawValue, "--output", output.path])
            #expect(finished.status == 0, "\(finished.stderr)")
            let result = try finished.result()
            #expect(result.way == RunLoopThreadWay.delegateQueue.rawValue)
            #expect(result.outcome == .verified)
            #expect(result.attempts == 2)
            #expect(result.bytesDownloadedAgain <= 64 << 10)
            #expect(!finished.stderr.contains("case a:"))
            let lines = finished.stderr.split(separator: "\n").filter { $0.hasPrefix("  case c: ") }
            #expect(lines.count == 2, "\(finished.stderr)")
            if variant == .corrected { #expect(lines.allSatisfy { $0.contains("callbacks on queue 'lab.download-queue'") }) }
        }
    }

    @Test(arguments: Variant.allCases)
    func dropAt40PercentResumesWithRange(variant: Variant) async throws {
        try await OffThePool.run {
            let fixture = Fixture(name: "drop", size: 8 << 20)
            let url = server.url(for: fixture, faults: "drop:40pct,ok", run: UUID().uuidString)
            let output = directory.appendingPathComponent("drop-\(variant).bin")
            let finished = try ChildProcess.run(
                Self.executable,
                ["--url", url.absoluteString, "--output", output.path, "--variant", variant.rawValue, "--way", "run-loop", "--json"])
            #expect(finished.status == 0, "\(finished.stderr)")
            let result = try finished.result()
            #expect(result.verified)
            #expect(result.attempts == 2)
            #expect(try FileDigest.sha256Hex(of: output) == fixture.sha256Hex())
            try #require(result.resumedFrom.count == 1)
            let offset = result.resumedFrom[0]
            #expect(abs(offset - fixture.size * 40 / 100) <= 64 << 10)
            #expect(result.bytesDownloadedAgain <= 64 << 10)
            let resume = try #require(result.requests.last)
            #expect(resume.status == 206)
            #expect(resume.range == "bytes=\(offset)-")
            #expect(resume.ifRange == fixture.etag)
            #expect(resume.contentRange == "bytes \(offset)-\(fixture.size - 1)/\(fixture.size)")
        }
    }

    @Test func helpListsTheWays() async throws {
        try await OffThePool.run {
            let finished = try ChildProcess.run(Self.executable, ["--help"])
            #expect(finished.status == 0)
            #expect(finished.stdout.hasPrefix("lesson-06-runloop-thread: A connection on a background thread, and its run loop\n"))
            for way in [RunLoopThreadWay.story, .runLoop, .delegateQueue].map(\.rawValue) { #expect(finished.stdout.contains("\n  \(way) ")) }
        }
    }

    // MARK: - Reading the story

    private func caseLine(_ prefix: String, in finished: ChildProcess.Finished) throws -> String {
        let lines = finished.stderr.split(separator: "\n").filter { $0.hasPrefix("  " + prefix) }
        try #require(lines.count == 1, "\(prefix) \(finished.stderr)")
        return String(lines[0])
    }

    /// The captures of the first match of `pattern`, as numbers ("65,536" is 65536).
    private func numbers(in line: String, _ pattern: String) throws -> [Double] {
        let match = try #require(try line.firstMatch(of: Regex(pattern)), "\(pattern) in \(line)")
        return match.output.dropFirst().compactMap { $0.substring.flatMap { Double($0.replacingOccurrences(of: ",", with: "")) } }
    }

    /// The first capture of every match of `pattern`, as numbers.
    private func allNumbers(in line: String, _ pattern: String) throws -> [Double] {
        try line.matches(of: Regex(pattern))
            .compactMap { $0.output[1].substring.flatMap { Double($0.replacingOccurrences(of: ",", with: "")) } }
    }

    private func tid(in line: Substring) -> String {
        line.split(separator: "(tid ").last?.prefix { $0.isNumber }.description ?? ""
    }
}
