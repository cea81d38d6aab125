/// Lesson 04, the article's variant: the strategy as the article writes it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/04-session-data-task.md explains it.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Asks for the rest with Range and appends whatever arrives.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the task starts.
    private let run: LessonRun
    private var currentLength: Int64 = 0  // bytes on disk, counted here
    private var totalLength: Int64 = 0
    private var writeHandle: FileHandle?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        let attributes = try? FileManager.default.attributesOfItem(atPath: run.file.path)
        currentLength = (attributes?[.size] as? NSNumber)?.int64Value ?? 0
        // Defect: URLSession adds Accept-Encoding: gzip, and a server that compresses ignores the
        // Range: the whole file comes again, compressed, and is appended.
        var request = URLRequest(url: run.url)
        if currentLength > 0 {
            request.setValue("bytes=\(currentLength)-", forHTTPHeaderField: "Range")
        }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        // Defect: total = this response's length + what is on disk, and no look at the status
        // or Content-Range. A 200 with the whole file, or a 206 of a file that has changed, is
        // appended after the partial one.
        // Defect: under gzip expectedContentLength is the compressed size (the bytes arrive
        // decoded); without a Content-Length it is -1, and -1 + the bytes on disk is no total:
        // either way progress passes 100%.
        totalLength = response.expectedContentLength + currentLength
        if !FileManager.default.fileExists(atPath: run.file.path) {
            _ = FileManager.default.createFile(atPath: run.file.path, contents: nil)
        }
        writeHandle = FileHandle(forWritingAtPath: run.file.path)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        _ = try? writeHandle?.seekToEnd()
        try? writeHandle?.write(contentsOf: data)
        currentLength += Int64(data.count)
        run.progress.update(received: currentLength, expected: totalLength)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? writeHandle?.close()
        writeHandle = nil
        if let error {
            run.log("download failed")
            finish(.failed(error))
        } else {
            run.log("download finished")
            finish(.finished)
        }
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        // Cleared before the call: the next Start may hand over a new completion at once.
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
