/// Lesson 02: download to disk with a FileHandle, seeking to the end before each chunk, and
/// resume from the size of the partial file.
///
/// Follows §3 of "网络篇 - 03.NSURLConnection应用场景" (create an empty file, seek to its end and
/// write every chunk, send a Range header on the next start) and the NSURLConnection listing of
/// "iOS 断点续传" (the same handle-based writing; the total worked out once). Memory stays flat
/// because each chunk goes to the file as it arrives.
///
/// `ArticleDownload` keeps the article's logic, defects included. `CorrectedDownload` fixes them.
/// Read Lessons/02-filehandle.md next to this file.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

Lesson(
    id: "02-filehandle",
    title: "FileHandle seek-to-end and write, resumed with Range",
    defaultSize: 64 << 20,
    defaultFaults: "drop:40pct,ok"  // the first attempt breaks at 40%, the second one behaves
).run { run in
    switch run.variant {
    case .article: ArticleDownload(run)
    case .corrected: CorrectedDownload(run)
    }
}

// MARK: - The article's version

/// Reads the local size, asks for the rest, and writes whatever arrives at the end of the file.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var totalDataSize: Int64 = 0  // the whole file, as worked out from the first response
    private var curDataLength: Int64 = 0  // how much has been downloaded
    // Created on first use and never reset: after close() a second download in this process
    // would write to a closed handle.
    private lazy var fileHandle = FileHandle(forWritingAtPath: run.file.path)
    private var connection: URLConnection?
    private var outcome: AttemptResult?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile() -> AttemptResult {
        outcome = nil
        let attributes = try? FileManager.default.attributesOfItem(atPath: run.file.path)
        // Defect: the size goes through a 32-bit int (Objective-C's intValue); past 2 GiB it wraps.
        let localSize = Int64((attributes?[.size] as? NSNumber)?.int32Value ?? 0)
        curDataLength = localSize

        var request = URLRequest(url: run.url)
        // Defect: "bytes:N-" with a colon is not a range servers understand (RFC 9110 wants
        // "bytes=N-"). They ignore it and send the whole file with 200.
        request.setValue("bytes:\(localSize)-", forHTTPHeaderField: "Range")
        connection = URLConnection(request: request, delegate: self)
        RunLoop.current.run(until: { outcome != nil })
        return outcome!
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        // As in the listing of "iOS 断点续传", the total is worked out once.
        guard totalDataSize == 0 else { return }
        // Defect: total = this response's length + what is on disk. When a 200 brings the whole
        // file after a partial one, progress runs past 100%.
        totalDataSize = response.expectedContentLength + curDataLength
        if curDataLength == 0 {
            _ = FileManager.default.createFile(atPath: run.file.path, contents: nil)
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        curDataLength += Int64(data.count)
        run.progress.update(received: curDataLength, expected: totalDataSize)
        // Defect: no look at the status or Content-Range: a 200 carrying the whole file lands
        // after the partial one. Write errors are dropped, as writeData: offers none to check.
        _ = try? fileHandle?.seekToEnd()
        try? fileHandle?.write(contentsOf: data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        try? fileHandle?.close()
        curDataLength = 0
        outcome = .finished
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed")
        outcome = .failed(error)
    }
}

// MARK: - The corrected version

/// Writes only bytes that provably continue the partial file. `PartialFile` (LabKit) holds the
/// resume rules shared with lessons 03 and 04: Range + If-Range, and what each answer means.
final class CorrectedDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private let partial: PartialFile
    private var fileHandle: FileHandle?
    private var connection: URLConnection?
    private var outcome: AttemptResult?

    init(_ run: LessonRun) {
        self.run = run
        partial = PartialFile(run)
    }

    func downloadFile() -> AttemptResult {
        outcome = nil
        connection = URLConnection(request: partial.nextRequest(), delegate: self)
        RunLoop.current.run(until: { outcome != nil })
        return outcome!
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        switch partial.decide(response) {
        case .append(let offset):
            openFile(writingAt: offset)
        case .replace:
            openFile(writingAt: 0)
        case .complete:
            break  // nothing is missing; the (empty) body is not written anywhere
        case .reject(let error):
            fail(error)
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let fileHandle else { return }
        // Every write is checked: a failed one stops the download, partial file kept.
        do { try partial.append(data, through: fileHandle) } catch { fail(error) }
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        closeFile()
        partial.finished()
        outcome = .finished
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // The partial file and its sidecar stay on disk, ready for the next attempt.
        closeFile()
        outcome = .failed(error)
    }

    /// Puts the write position at the checked `offset`, cutting off anything after it. LabKit
    /// also creates the file: `FileHandle(forWritingAtPath:)` alone is nil for a file that does
    /// not exist yet.
    private func openFile(writingAt offset: Int64) {
        do {
            fileHandle = try partial.openForWriting(at: offset)
        } catch {
            fail(error)
        }
    }

    private func closeFile() {
        try? fileHandle?.close()
        fileHandle = nil
    }

    private func fail(_ error: any Error) {
        connection?.cancel()
        closeFile()
        outcome = .failed(error)
    }
}
