/// Lesson 08: the same download with async/await, as a class writes it today.
///
/// The delegate-era lessons answer four questions: where the body goes, what happens to memory,
/// how to pause and resume, and what cancelling does. Apple's async URLSession API (the WWDC 2021
/// session "Use async/await with URLSession") asks them again, in fewer lines:
/// - `data(from:)` hands back the whole body at once, as lesson 00's completion handler does;
/// - `bytes(for:)` hands it over as it arrives, as lessons 02 to 04's delegates do;
/// - `download(for:)` writes it to a temporary file, as lesson 05's download task does;
/// - cancelling the Swift Task cancels the transfer, which is how an async Pause is made.
///
/// Foundation on Linux has `data` and `download` but no `bytes(for:)`; LabKit provides it, with
/// Apple's shape (`URLSession.AsyncBytes`).
///
/// `ArticleDownload` is the one-liner most tutorials show. `CorrectedDownload` streams, checks and
/// resumes; `--way` picks how it reads the body. Read Lessons/08-async-await.md next to this file.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import Synchronization

Lesson(
    id: "08-async-await",
    title: "async/await: data(from:), and bytes(for:) streamed to a file and resumed",
    defaultSize: 64 << 20,
    defaultFaults: "drop:40pct,ok",  // the first attempt breaks at 40%, the second one behaves
    ways: Way.self
).run { run in
    switch run.variant {
    case .article: ArticleDownload(run: run)
    case .corrected: CorrectedDownload(run: run)
    }
}

/// How the corrected variant gets the body, picked with `--way`. The article variant has one way.
enum Way: String, LessonWay {
    case chunks
    case byteByByte = "byte-by-byte"
    case pause
    case download

    static let variants: [Variant] = [.corrected]

    var summary: String {
        switch self {
        case .chunks: "bytes(for:), the body read chunk by chunk into a file; resumed with Range"
        case .byteByByte: "the same, read one byte at a time, as `for try await byte in bytes` does"
        case .pause: "the same, with a Pause button at 25%: a task group cancels the transfer, then it resumes"
        case .download: "download(for:) to a temporary file, then moved; no resume on Linux"
        }
    }
}

// MARK: - The article's version

/// One call for the whole body, then one write.
struct ArticleDownload: AsyncLessonDownload {
    let run: LessonRun

    func downloadFile() async -> AttemptResult {
        do {
            // Defect: the whole body is held in memory until the call returns (twice over, on
            // Linux), so memory grows with the file. A broken transfer keeps nothing: the next
            // attempt starts again from byte 0.
            let (data, _) = try await run.sharedSession.data(from: run.url)
            // Defect: the response is never looked at. A 404's error page is saved as the file.
            try data.write(to: run.file)
            run.log("got \(data.count) bytes in one piece and saved them")
            return .finished
        } catch {
            return .failed(error)
        }
    }
}

// MARK: - The corrected version

/// Streams the body to the file as it arrives, checks every response before writing, and
/// resumes with `Range` and `If-Range` through `PartialFile` (LabKit), as lessons 02 to 04 do.
final class CorrectedDownload: AsyncLessonDownload {
    private let run: LessonRun
    /// What the Pause button watches: bytes on disk, and the whole file's size once known.
    private let onDisk = Mutex((written: Int64(0), total: Int64(-1)))
    private let pausedOnce = Atomic(false)
    private let pressedAt = Atomic<Int64>(0)

    init(run: LessonRun) {
        self.run = run
        if run.way(Way.self) == .download { TemporaryFolder.giveThisAppItsOwn() }
    }

    func downloadFile() async -> AttemptResult {
        switch run.way(Way.self) {
        case .chunks: await stream(byteByByte: false)
        case .byteByByte: await stream(byteByByte: true)
        case .pause: await streamWithPauseButton()
        case .download: await downloadToTemporaryFile()
        }
    }

    /// One attempt: ask for what is missing, check the answer, append its body to the file.
    private func stream(byteByByte: Bool) async -> AttemptResult {
        let partial = PartialFile(run)
        do {
            // Returns once the response head is in; the body is still on its way.
            let (bytes, response) = try await run.sharedSession.bytes(for: partial.nextRequest())
            let writeFrom: Int64
            switch partial.decide(response) {
            case .append(let offset): writeFrom = offset
            case .replace: writeFrom = 0
            case .complete:
                partial.finished()
                return .finished
            case .reject(let error):
                return .failed(error)
            }
            let file = try partial.openForWriting(at: writeFrom)
            defer { try? file.close() }
            if byteByByte {
                try await appendOneByteAtATime(bytes, to: partial, through: file)
            } else {
                for try await chunk in bytes.chunks {
                    try partial.append(chunk, through: file)
                    onDisk.withLock { $0 = (partial.written, partial.total) }
                }
            }
            partial.finished()
            return .finished
        } catch {
            // Cancelled (paused) or broken, the partial file and its sidecar stay, ready for Range.
            return .failed(error)
        }
    }

    /// `for try await byte in bytes`: one step of the iterator per byte, gathered into 64 KiB
    /// writes. The bytes are the same; the cost is the work done per byte (see the lesson page).
    /// An array, not a `Data`: `Data.append` of one byte costs about three times as much.
    private func appendOneByteAtATime(_ bytes: URLSession.AsyncBytes, to partial: PartialFile,
                                      through file: FileHandle) async throws {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64 << 10)
        do {
            for try await byte in bytes {
                buffer.append(byte)
                if buffer.count == 64 << 10 {
                    try partial.append(Data(buffer), through: file)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
        } catch {
            // Bytes that arrived before a break are where the resume starts: write them first.
            try partial.append(Data(buffer), through: file)
            throw error
        }
        try partial.append(Data(buffer), through: file)
    }

    /// Pause, the structured way: a task group races the transfer against the Pause button.
    /// Whichever child ends first, the group cancels the other. A cancelled transfer stops at
    /// once and leaves a partial file that Resume continues with Range.
    private func streamWithPauseButton() async -> AttemptResult {
        // Pause is pressed once; a later attempt (after a break) is a plain Resume.
        if pausedOnce.load(ordering: .relaxed) { return await stream(byteByByte: false) }
        let firstToEnd = await withTaskGroup(of: AttemptResult?.self) { group in
            group.addTask { await self.stream(byteByByte: false) }
            group.addTask {
                await self.pauseButtonPressed()
                return nil  // nil: Pause was pressed first
            }
            let first = await group.next()!
            group.cancelAll()
            return first
        }
        if let firstToEnd { return firstToEnd }
        let fileSize = PartialFile.size(of: run.file)
        let afterThePress = fileSize - pressedAt.load(ordering: .relaxed)
        run.log("paused with \(ByteFormat.iec(fileSize)) on disk, \(ByteFormat.iec(afterThePress)) of it already on its way at the press")
        run.log("resume")
        return await stream(byteByByte: false)
    }

    /// Returns when the person, watching the progress, presses Pause: at 25% of the file (before
    /// the default fault breaks the connection at 40%). A cancelled wait (the transfer ended
    /// first) returns too.
    private func pauseButtonPressed() async {
        while !Task.isCancelled {
            let (written, total) = onDisk.withLock { $0 }
            if total > 0, written >= total / 4, written < total {
                pausedOnce.store(true, ordering: .relaxed)
                pressedAt.store(written, ordering: .relaxed)
                run.log("pause at \(ByteFormat.iec(written))")
                return
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// `download(for:)`: Foundation writes the body to a file of its own and hands back where.
    /// Linux has no resume data, so a broken transfer starts again from byte 0.
    private func downloadToTemporaryFile() async -> AttemptResult {
        do {
            try TemporaryFolder.create()
        } catch {
            return .failed(error)
        }
        defer { TemporaryFolder.removeWithLeftovers(run) }
        do {
            let (location, response) = try await run.sharedSession.download(for: URLRequest(url: run.url))
            // Handed over, the file is ours to move or delete: Foundation never will.
            defer { try? FileManager.default.removeItem(at: location) }
            guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else {
                return .failed(DownloadError.httpStatus((response as? HTTPURLResponse)?.statusCode ?? 0,
                                                        url: (response.url ?? run.url).absoluteString))
            }
            let received = PartialFile.size(of: location)
            if response.expectedContentLength >= 0, received != response.expectedContentLength {
                return .failed(DownloadError.lengthMismatch(expected: response.expectedContentLength, received: received))
            }
            try? FileManager.default.removeItem(at: run.file)
            do {
                try FileManager.default.moveItem(at: location, to: run.file)
            } catch {
                return .failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription))
            }
            return .finished
        } catch {
            return .failed(error)
        }
    }
}

/// An iOS app has a tmp folder of its own, which the system empties now and then. On Linux
/// `NSTemporaryDirectory()` is /tmp, shared by every program, and Foundation leaves the file of a
/// download that failed there for good (its name is never handed out). So this app gets a folder
/// of its own, as on iOS (inside the lab's `download-lab-tmp`), and empties it after every attempt.
enum TemporaryFolder {
    static let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("download-lab-tmp", isDirectory: true)
        .appendingPathComponent("lesson-08-\(getpid())", isDirectory: true)

    /// Foundation reads `TMPDIR` each time it makes a download's file. Set once, before the first
    /// download.
    static func giveThisAppItsOwn() { setenv("TMPDIR", path.path, 1) }

    /// Foundation cannot make its file in a folder that is missing: it must exist during a download.
    /// Where it cannot be made (TMPDIR names a file, or a folder nobody may write), Foundation
    /// would stop the program at its first download: that is said here, as a local file error.
    static func create() throws {
        do {
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
        } catch {
            throw DownloadError.localIO(path: path.path, reason: "cannot create the temporary folder: \(describe(error))")
        }
        guard access(path.path, W_OK | X_OK) == 0 else {
            throw DownloadError.localIO(path: path.path, reason: "the temporary folder cannot be written")
        }
    }

    static func removeWithLeftovers(_ run: LessonRun) {
        let leftovers = (try? FileManager.default.contentsOfDirectory(at: path, includingPropertiesForKeys: nil)) ?? []
        for file in leftovers {
            run.log("Foundation left \(ByteFormat.iec(PartialFile.size(of: file))) in \(file.lastPathComponent): deleting it")
            try? FileManager.default.removeItem(at: file)
        }
        try? FileManager.default.removeItem(at: path)
    }
}
