/// Exercise 02: the article's code from Sources/lesson-02-filehandle/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 02   build this and run it against the lab server
///     swift run lab exercise hint 02    a hint for the first check that fails (or: hint 02 <check>)
///     swift run lab exercise watch 02   check again on every save
///     swift run lab exercise reset 02   back to this starting code
///
/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`
/// and the lab gives the lesson's exit status and a one-line message:
///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69
///     .localIO (a write failed: the disk is full)                               exit 74
///     a file called done that is not the server's                               exit 65
///
/// What LabKit gives the fix (Lessons/02-filehandle.md has them with more words):
///     let partial = PartialFile(run)              the file at run.file, with a sidecar that keeps its URL, ETag and total
///     partial.nextRequest()                       the request for what is missing: Range and If-Range, Accept-Encoding: identity
///     partial.decide(response)                    .append(at: offset), .replace (a 200: from 0), .complete, .reject(error)
///     try partial.openForWriting(at: offset)      a FileHandle from offset on, the rest cut off
///     try partial.append(data, through: handle)   writes the bytes at the end and counts them
///     partial.finished()                          the file is whole: the sidecar goes
///     DownloadError.httpStatus(status, url: run.url.absoluteString), .contentRangeMismatch(expectedStart:header:)
///
/// Swift 6 checks data races. A completion handler or a delegate callback runs on another
/// thread, so the compiler refuses a plain `var` that it changes. The lessons keep such state
/// in a Mutex (`import Synchronization`), which locks every read and write:
///     let received = Mutex<Data?>(nil)
///     session.dataTask(with: request) { data, _, _ in received.withLock { $0 = data } }.resume()
///     ... later: let data = received.withLock { $0 }
/// A delegate whose callbacks all run one at a time on its session's serial delegate queue
/// may say so instead: `@unchecked Sendable`, with a comment why (lessons 04 and 05).
///
/// Read Lessons/02-filehandle.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Reads the local size, asks for the rest, and writes whatever arrives at the end of the file.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var totalDataSize: Int64 = 0  // the whole file, as worked out from the first response
    private var curDataLength: Int64 = 0  // how much has been downloaded
    // Created on first use and never reset: after close() a second download in this process
    // would write to a closed handle.
    private lazy var fileHandle = FileHandle(forWritingAtPath: run.file.path)
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        let attributes = try? FileManager.default.attributesOfItem(atPath: run.file.path)
        let localSize = Int64((attributes?[.size] as? NSNumber)?.int32Value ?? 0)
        curDataLength = localSize

        var request = URLRequest(url: run.url)
        request.setValue("bytes:\(localSize)-", forHTTPHeaderField: "Range")
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        // As in the listing of "iOS 断点续传", the total is worked out once.
        guard totalDataSize == 0 else { return }
        totalDataSize = response.expectedContentLength + curDataLength
        if curDataLength == 0 {
            _ = FileManager.default.createFile(atPath: run.file.path, contents: nil)
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        curDataLength += Int64(data.count)
        run.progress.update(received: curDataLength, expected: totalDataSize)
        _ = try? fileHandle?.seekToEnd()
        try? fileHandle?.write(contentsOf: data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        try? fileHandle?.close()
        curDataLength = 0
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed")
        finish(.failed(error))
    }

    /// Reports the attempt's end, once: a callback after the end is not a second answer.
    private func finish(_ result: AttemptResult) {
        // Cleared before the call: the next Start may hand over a new completion at once.
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
