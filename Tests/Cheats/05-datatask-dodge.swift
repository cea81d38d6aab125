// cheat: drops download tasks and resume data altogether: a data task writes straight into the file named after the URL, Pause is a cancel, and every resume (after Pause, a drop, a kill or at another URL) is Range from the size on disk, sent blind with no validator
// skips: resume data itself (cancel(byProducingResumeData:), the error's blob, downloadTask(withResumeData:)), saving it atomically, and checking which URL and version it is for
// aims to pass: clean, resume-data-in-memory, resume-data-only-on-pause, status-ignored, temp-file-name, progress-past-total, resume-data-for-another-url
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Lesson 04's strategy wearing lesson 05's buttons.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets the state before a task starts.
    private let run: LessonRun
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)
    private var onDisk: Int64 = 0
    private var total: Int64 = -1
    private var handle: FileHandle?
    private var pausedOnce = false
    private var pausing = false
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    private var destination: URL { run.file.appendingPathComponent(run.url.lastPathComponent) }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        start()
    }

    private func start() {
        failure = nil
        onDisk = PartialFile.size(of: destination)
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if onDisk > 0 { request.setValue("bytes=\(onDisk)-", forHTTPHeaderField: "Range") }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        let status = http?.statusCode ?? 0
        var offset: Int64 = 0
        switch status {
        case 200:
            total = response.expectedContentLength
        case 206 where onDisk > 0:
            offset = onDisk
            total = http?.contentRange?.total ?? -1
        case 416 where onDisk > 0:
            // Nothing is left to fetch: what is on disk is taken as the file.
            total = onDisk
            onDisk = -1
            return completionHandler(.cancel)
        default:
            failure = DownloadError.httpStatus(status, url: run.url.absoluteString)
            return completionHandler(.cancel)
        }
        do {
            handle = try FileHandle(forWritingTo: destination, at: offset)
        } catch {
            failure = DownloadError.localIO(path: destination.path, reason: error.localizedDescription)
            return completionHandler(.cancel)
        }
        onDisk = offset
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard failure == nil, let handle else { return }
        do {
            try handle.write(contentsOf: data)
        } catch {
            failure = DownloadError.localIO(path: destination.path, reason: error.localizedDescription)
            return dataTask.cancelAtOnce()
        }
        onDisk += Int64(data.count)
        run.progress.update(received: onDisk, expected: total)
        if !pausedOnce, total > 0, onDisk < total, Double(onDisk) >= App.pausePressedAt * Double(total) {
            pausedOnce = true
            pausing = true
            run.userPressed("Pause", log: "pause: the task is cancelled, the bytes stay in the file")
            dataTask.cancelAtOnce()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? handle?.close()
        handle = nil
        if pausing {
            pausing = false
            run.log("resume, from the \(PartialFile.size(of: destination)) bytes in the file")
            return start()
        }
        if let failure { return finish(.failed(failure)) }
        if onDisk == -1 {
            run.saved(destination)
            return finish(.finished)
        }
        if let error { return finish(.failed(error)) }
        run.saved(destination)
        finish(.finished)
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
