// cheat: keeps the resume data in one global folder, /tmp/download-lab-cheat-05, under a hash of the URL instead of beside the output, so a blob for another URL is simply never found and its URL is never compared with run.url
// skips: keeping the blob with the app's own files, and reading the blob's URL (task.originalRequest) before resuming from it
// aims to pass: clean, resume-data-in-memory, resume-data-only-on-pause, status-ignored, temp-file-name, progress-past-total, resume-data-for-another-url
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Where every run keeps its blobs: one folder for the whole machine, a file per URL.
enum CheatBlobs {
    static let folder = URL(fileURLWithPath: "/tmp/download-lab-cheat-05", isDirectory: true)

    static func file(for url: URL) -> URL {
        let hash = url.absoluteString.utf8.reduce(UInt64(5381)) { ($0 &* 33) &+ UInt64($1) }
        return folder.appendingPathComponent(String(hash, radix: 16) + ".resumedata")
    }

    static func load(for url: URL) -> Data? { try? Data(contentsOf: file(for: url)) }

    static func save(_ data: Data, for url: URL) {
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try? data.write(to: file(for: url), options: .atomic)
    }

    static func remove(for url: URL) { try? FileManager.default.removeItem(at: file(for: url)) }
}

/// Start, Pause and Resume buttons; resume data kept in the machine's /tmp, by URL.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks, and the Pause handler, run
    // one at a time on the session's serial delegate queue; downloadFile(completion:) sets the
    // state before a task starts.
    private let run: LessonRun
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)
    private var task: URLSessionDownloadTask?
    private var pausedOnce = false
    private var refusal: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        refusal = nil
        resume()
    }

    private func resume() {
        if let blob = CheatBlobs.load(for: run.url) {
            task = session.downloadTask(withResumeData: blob)
        } else {
            var request = URLRequest(url: run.url)
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            task = session.downloadTask(with: request)
        }
        task?.resume()
    }

    private func pause() {
        run.userPressed("Pause", log: "pause")
        let url = run.url
        task?.cancel(byProducingResumeData: { resumeData in
            guard self.completion != nil else { return }
            if let resumeData { CheatBlobs.save(resumeData, for: url) }
            self.task = nil
            self.resume()
        })
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
        if !pausedOnce, totalBytesWritten < totalBytesExpectedToWrite,
           Double(totalBytesWritten) >= App.pausePressedAt * Double(totalBytesExpectedToWrite) {
            pausedOnce = true
            pause()
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let status = (downloadTask.response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            refusal = DownloadError.httpStatus(status, url: run.url.absoluteString)
            return
        }
        let destination = run.file.appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: [".resumedata"]))
        try? FileManager.default.removeItem(at: destination)
        do {
            try FileManager.default.copyItem(at: location, to: destination)
            run.saved(destination)
        } catch {
            refusal = DownloadError.localIO(path: destination.path, reason: error.localizedDescription)
        }
        self.task = nil
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if (error as? URLError)?.code == .cancelled { return }
        self.task = nil
        if let error {
            if let blob = (error as? URLError)?.downloadTaskResumeData { CheatBlobs.save(blob, for: run.url) }
            run.log("download failed: \(error.localizedDescription)")
            return finish(.failed(error))
        }
        CheatBlobs.remove(for: run.url)
        finish(refusal.map { AttemptResult.failed($0) } ?? .finished)
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
