/// Exercise 03: the article's code from Sources/lesson-03-outputstream/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 03   build this and run it against the lab server
///     swift run lab exercise hint 03    a hint for the first check that fails (or: hint 03 <check>)
///     swift run lab exercise watch 03   check again on every save
///     swift run lab exercise reset 03   back to this starting code
///
/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`
/// and the lab gives the lesson's exit status and a one-line message:
///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69
///     .localIO (a write failed: the disk is full)                               exit 74
///     a file called done that is not the server's                               exit 65
///
/// What LabKit gives the fix (Lessons/03-outputstream.md has them with more words):
///     let partial = PartialFile(run)              the file at run.file, with a sidecar that keeps its URL, ETag and total
///     partial.nextRequest()                       the request for what is missing: Range and If-Range, Accept-Encoding: identity
///     partial.decide(response)                    .append(at: offset), .replace (a 200: from 0), .complete, .reject(error)
///     OutputStream(toFileAtPath: run.file.path, append: true)  after .append(at:); append: false after .replace
///     try partial.append(data, through: output)   writes all of the bytes (write may take fewer), or throws .localIO
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
/// Read Lessons/03-outputstream.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Asks the server for the total with HEAD, reads the local size, and appends whatever arrives.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var fileSize: Int64 = 0     // the whole file, as the HEAD request reported it
    private var currentSize: Int64 = 0  // how much is on disk
    private var output: OutputStream?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        getServerFileSize()
        getLocalFileSize()

        if currentSize == fileSize {
            run.log("the file is already downloaded; not downloading it again")
            return finish(.finished)
        }
        // A local file larger than the server's must be broken: delete it and start over.
        if currentSize > fileSize {
            try? FileManager.default.removeItem(at: run.file)
            currentSize = 0
        }

        var request = URLRequest(url: run.url)
        request.setValue("bytes=\(currentSize)-", forHTTPHeaderField: "Range")
        // Callbacks arrive on the run loop of the thread that starts the connection, as it runs.
        connection = URLConnection(request: request, delegate: self)
    }

    private func getServerFileSize() {
        var request = URLRequest(url: run.url)
        request.httpMethod = "HEAD"
        // Like the article, ignore any error: the size is then unknown (-1).
        let response = try? URLConnection.sendSynchronousRequest(request).response
        fileSize = response?.expectedContentLength ?? -1
    }

    private func getLocalFileSize() {
        let attributes = try? FileManager.default.attributesOfItem(atPath: run.file.path)
        currentSize = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        output = OutputStream(toFileAtPath: run.file.path, append: true)
        output?.open()
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        currentSize += Int64(data.count)
        run.progress.update(received: currentSize, expected: fileSize)
        _ = output?.write(data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        output?.close()
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed, please download again")
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
