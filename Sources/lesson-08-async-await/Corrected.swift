/// Lesson 08, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/08-async-await.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun, _ way: AsyncAwaitWay) -> any AsyncLessonDownload { CorrectedDownload(run: run, way: way) }

/// Streams the body to the file as it arrives, checks every response before writing, and
/// resumes with `Range` and `If-Range` through `PartialFile` (LabKit), as lessons 02 to 04 do.
final class CorrectedDownload: AsyncLessonDownload {
    private let run: LessonRun
    private let way: AsyncAwaitWay
    /// What the Pause button watches: bytes on disk, and the whole file's size once known.
    private let onDisk = Mutex((written: Int64(0), total: Int64(-1)))
    private let pausedOnce = Atomic(false)
    private let pressedAt = Atomic<Int64>(0)

    init(run: LessonRun, way: AsyncAwaitWay) {
        self.run = run
        self.way = way
        if way == .download { TemporaryFolder.giveThisAppItsOwn() }
    }

    func downloadFile() async -> AttemptResult {
        switch way {
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
            if byteByByte {
                // Apple's bytes(for:): returns once the response head is in; the body is still on its way.
                let (bytes, response) = try await run.sharedSession.bytes(for: partial.nextRequest())
                guard let file = try openForTheBody(of: response, partial) else { return .finished }
                defer { try? file.close() }
                try await appendOneByteAtATime(bytes, to: partial, through: file)
            } else {
                // LabKit's bodyChunks(for:): the same, with the body in the pieces the network delivers.
                let (chunks, response) = try await run.sharedSession.bodyChunks(for: partial.nextRequest())
                guard let file = try openForTheBody(of: response, partial) else { return .finished }
                defer { try? file.close() }
                for try await chunk in chunks {
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

    /// The file, open where `response`'s body goes; nil when nothing is missing (the file is
    /// whole). An answer that is not the rest of the file throws.
    private func openForTheBody(of response: URLResponse, _ partial: PartialFile) throws -> FileHandle? {
        switch partial.decide(response) {
        case .append(let offset): return try partial.openForWriting(at: offset)
        case .replace: return try partial.openForWriting(at: 0)
        case .complete:
            partial.finished()
            return nil
        case .reject(let error):
            throw error
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
        // The button watches this transfer's progress, not what an earlier attempt left behind.
        onDisk.withLock { $0 = (0, -1) }
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
        run.log("paused with \(fileSize) bytes on disk, \(afterThePress) bytes of it already on its way at the press")
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
                run.userPressed("Pause", log: "pause at \(written) bytes")
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
            // The file as it is: under gzip, expectedContentLength would be the compressed size
            // and the file the decoded bytes, so the length check below would fail a good file.
            var request = URLRequest(url: run.url)
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            let (location, response) = try await run.sharedSession.download(for: request)
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
/// of its own, as on iOS (inside the lab's `LabFolders.temporary`), and empties it after every attempt.
enum TemporaryFolder {
    static let path = LabFolders.temporary.appendingPathComponent("lesson-08-\(getpid())", isDirectory: true)

    /// Foundation reads `TMPDIR` each time it makes a download's file. Set once, before the first
    /// download.
    static func giveThisAppItsOwn() { setenv("TMPDIR", path.path, 1) }

    /// Foundation cannot make its file in a folder that is missing: it must exist during a download.
    /// Where it cannot be made (TMPDIR names a file, or a folder nobody may write), Foundation
    /// would stop the program at its first download: that is said here, as a local file error.
    static func create() throws {
        do {
            try LabFolders.make(path)
        } catch {
            throw DownloadError.localIO(path: path.path, reason: "cannot create the temporary folder: \(error.localizedDescription)")
        }
        guard access(path.path, W_OK | X_OK) == 0 else {
            throw DownloadError.localIO(path: path.path, reason: "the temporary folder cannot be written")
        }
    }

    static func removeWithLeftovers(_ run: LessonRun) {
        let leftovers = (try? FileManager.default.contentsOfDirectory(at: path, includingPropertiesForKeys: nil)) ?? []
        for file in leftovers {
            run.log("Foundation left \(PartialFile.size(of: file)) bytes in \(file.lastPathComponent): deleting it")
            try? FileManager.default.removeItem(at: file)
        }
        try? FileManager.default.removeItem(at: path)
    }
}
