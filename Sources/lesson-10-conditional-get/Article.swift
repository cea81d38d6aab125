/// Lesson 10, the article's variant: the strategy as the articles write it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/10-conditional-get.md explains it.
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
    // Defect: the file lives in Caches, which iOS empties when storage runs low: the next launch
    // finds nothing and downloads it all again.
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
        // Defect: a HEAD before every download, one more round trip, to learn only the size.
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
            // Defect: the same size is taken for the same file; a file that changed on the server
            // and kept its length is never fetched again.
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
