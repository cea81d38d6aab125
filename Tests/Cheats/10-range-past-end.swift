// cheat: sends no If-None-Match or If-Modified-Since: the next launch asks for the bytes past the end of the file it has (Range: bytes=<size>-) with the kept ETag as If-Range; an unchanged file makes the server answer 416 (nothing to send), a changed one makes it ignore the Range and send 200 with the new file
// skips: the conditional GET itself (If-None-Match answered 304 Not Modified), abusing Range and If-Range as a stand-in for it
// aims to pass: keeps-the-current-file, same-size-is-current, extra-head, purged-home, clean
/// Exercise 10: the article's code from Sources/lesson-10-conditional-get/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 10   build this and run it against the lab server
///     swift run lab exercise hint 10    a hint for the first check that fails (or: hint 10 <check>)
///     swift run lab exercise watch 10   check again on every save
///     swift run lab exercise reset 10   back to this starting code
///
/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`
/// and the lab gives the lesson's exit status and a one-line message:
///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69
///     .localIO (a write failed: the disk is full)                               exit 74
///     a file called done that is not the server's                               exit 65
///
/// What LabKit gives the fix (Lessons/10-conditional-get.md has them with more words):
///     run.containerURL(for: .applicationSupportDirectory)   the app's folder for files it keeps (create it first)
///     request.setValue(etag, forHTTPHeaderField: "If-None-Match")   304 Not Modified: the file on disk is current
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
/// Read Lessons/10-conditional-get.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one launch. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// One GET per launch; with a file and its ETag on disk, a GET for what lies past its end.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the first task starts.
    private let run: LessonRun
    private let folder: URL
    private let file: URL
    private let incoming: URL
    private let etagFile: URL
    private var sizeOnDisk: Int64 = -1
    private var keptCurrent = false
    private var newETag: String?
    private var output: FileHandle?
    private var expected: Int64 = -1
    private var written: Int64 = 0
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    // No URL cache: the file on disk is the one copy.
    private lazy var session: URLSession = {
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return self.run.makeSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }()

    init(_ run: LessonRun) {
        self.run = run
        let folder = run.containerURL(for: .applicationSupportDirectory)
        let file = folder.appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: [".incoming", ".etag"]))
        self.folder = folder
        self.file = file
        incoming = folder.appendingPathComponent(file.lastPathComponent + ".incoming")
        etagFile = folder.appendingPathComponent(file.lastPathComponent + ".etag")
        super.init()
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        failure = nil
        keptCurrent = false
        newETag = nil
        written = 0
        sizeOnDisk = -1
        self.completion = completion
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            return finish(.failed(DownloadError.localIO(path: folder.path, reason: error.localizedDescription)))
        }
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        let size = PartialFile.size(of: file)
        if size > 0, let data = try? Data(contentsOf: etagFile), data.count <= 1024,
           let etag = String(data: data, encoding: .utf8), etag.hasPrefix("\""), !etag.contains("\n") {
            // Nothing lies past the end of an unchanged file: the server can only say 416. A
            // changed one fails If-Range, and the server sends it whole.
            sizeOnDisk = size
            request.setValue("bytes=\(size)-", forHTTPHeaderField: "Range")
            request.setValue(etag, forHTTPHeaderField: "If-Range")
        }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if status == 416, sizeOnDisk >= 0, let http = response as? HTTPURLResponse,
           case .unsatisfied(let total)? = http.contentRange, total == sizeOnDisk {
            run.log("nothing past byte \(sizeOnDisk) and the ETag still holds: \(file.lastPathComponent) is current")
            keptCurrent = true
            return completionHandler(.allow)
        }
        guard status == 200, let http = response as? HTTPURLResponse else {
            failure = DownloadError.httpStatus(status, url: run.url.absoluteString)
            return completionHandler(.cancel)
        }
        expected = http.expectedContentLength
        newETag = http.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("\"") ? $0 : nil }
        do {
            output = try FileHandle(forWritingTo: incoming, at: 0)
        } catch {
            failure = DownloadError.localIO(path: incoming.path, reason: error.localizedDescription)
            return completionHandler(.cancel)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard !keptCurrent, failure == nil, let output else { return }
        do {
            try output.write(contentsOf: data)
        } catch {
            failure = DownloadError.localIO(path: incoming.path, reason: error.localizedDescription)
            dataTask.cancelAtOnce()
            return
        }
        written += Int64(data.count)
        run.progress.update(received: written, expected: expected)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? output?.close()
        output = nil
        if keptCurrent, error == nil {
            run.saved(file)
            return finish(.finished)
        }
        if let error = failure ?? error {
            try? FileManager.default.removeItem(at: incoming)
            return finish(.failed(error))
        }
        if expected >= 0, written != expected {
            try? FileManager.default.removeItem(at: incoming)
            return finish(.failed(DownloadError.lengthMismatch(expected: expected, received: written)))
        }
        // The old ETag goes first and the new one comes last: a launch cut short in between
        // finds no ETag and downloads again.
        try? FileManager.default.removeItem(at: etagFile)
        do {
            try? FileManager.default.removeItem(at: file)
            try FileManager.default.moveItem(at: incoming, to: file)
        } catch {
            return finish(.failed(DownloadError.localIO(path: file.path, reason: error.localizedDescription)))
        }
        if let newETag { try? Data(newETag.utf8).write(to: etagFile, options: .atomic) }
        run.saved(file)
        run.log("download finished")
        finish(.finished)
    }

    /// Reports the launch's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
