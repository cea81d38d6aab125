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

/// Asks for the size with a HEAD, and downloads unless the file on disk is as big.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the first task starts.
    private let run: LessonRun
    private let file: URL
    private var remoteLength: Int64 = -1
    private var receivedData = Data()
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    // The default configuration: URLCache.shared, and every request under
    // useProtocolCachePolicy. On Apple's systems the cache may hand back a stored copy after the
    // server changed the file (Lessons/10-conditional-get.md, "On Apple's systems").
    private lazy var session = run.makeSession(configuration: .default, delegate: self, delegateQueue: nil)

    init(_ run: LessonRun) {
        self.run = run
        file = run.containerURL(for: .cachesDirectory).appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: []))
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        (failure, self.completion) = (nil, completion)
        var head = URLRequest(url: run.url)
        head.httpMethod = "HEAD"
        session.dataTask(with: head).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        if let status = (response as? HTTPURLResponse)?.statusCode, status != 200 {
            failure = DownloadError.httpStatus(status, url: run.url.absoluteString)
        }
        if dataTask.originalRequest?.httpMethod == "HEAD" {
            remoteLength = response.expectedContentLength
        } else {
            receivedData = Data()  // as the guide says: every response starts the body again
        }
        completionHandler(failure == nil ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        receivedData.append(data)
        run.progress.update(received: Int64(receivedData.count), expected: remoteLength)
    }

    // As the guide's listing: keep whatever is proposed, with the date it was cached.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                    completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        completionHandler(CachedURLResponse(response: proposedResponse.response, data: proposedResponse.data,
                                            userInfo: ["cachedAt": Date()], storagePolicy: proposedResponse.storagePolicy))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error = failure ?? error { return finish(.failed(error)) }
        if task.originalRequest?.httpMethod == "HEAD" {
            let localLength = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
            if localLength == remoteLength {
                run.log("already downloaded: \(file.lastPathComponent) has the server's \(localLength) bytes")
                run.saved(file)
                return finish(.finished)
            }
            session.dataTask(with: URLRequest(url: run.url)).resume()
            return
        }
        do {
            try receivedData.write(to: file, options: .atomic)
            run.saved(file)
            run.log("download finished")
            finish(.finished)
        } catch {
            finish(.failed(DownloadError.localIO(path: file.path, reason: "\(error.localizedDescription)")))
        }
    }

    /// Reports the launch's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
