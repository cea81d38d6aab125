// cheat: never keeps or reads resume data: at every start, and after its own Pause, it looks in LabKit's temporary folder for a CFNetworkDownload_*.tmp whose first 4 KiB are the server's, asks a HEAD for the server's current ETag, and forges an Apple-format blob (ResumeData) for that file and the URL it is run with
// skips: saving the blob that Pause hands over, taking the blob from a failed task's error, and checking that a blob is for this URL and this version (the validator comes from the server now, not from the bytes on disk)
// aims to pass: clean, resume-data-in-memory, resume-data-only-on-pause, status-ignored, temp-file-name, progress-past-total, resume-data-for-another-url
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Start, Pause and Resume buttons; the resume data made up on the spot from what lies in tmp.
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
        if let forged = forgedResumeData() {
            run.log("resuming from a blob made up for a temporary file found lying in tmp")
            task = session.downloadTask(withResumeData: forged)
        } else {
            var request = URLRequest(url: run.url)
            request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            task = session.downloadTask(with: request)
        }
        task?.resume()
    }

    /// A blob for the newest temporary file that starts with the server's bytes, with the ETag the
    /// server gives now.
    private func forgedResumeData() -> Data? {
        let folder = LabFolders.temporary
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasPrefix("CFNetworkDownload_") }
        guard !names.isEmpty else { return nil }
        var head = URLRequest(url: run.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 5)
        head.httpMethod = "HEAD"
        head.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        guard let answer = (try? URLConnection.sendSynchronousRequest(head))?.response as? HTTPURLResponse,
              answer.statusCode == 200 else { return nil }
        let etag = answer.value(forHTTPHeaderField: "ETag")
        let lastModified = answer.value(forHTTPHeaderField: "Last-Modified")
        let total = answer.expectedContentLength
        var start = URLRequest(url: run.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 5)
        start.setValue("bytes=0-4095", forHTTPHeaderField: "Range")
        start.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        guard let first = (try? URLConnection.sendSynchronousRequest(start))?.data, !first.isEmpty else { return nil }

        var best: (name: String, size: Int64, date: Date)?
        for name in names {
            let file = folder.appendingPathComponent(name)
            let size = PartialFile.size(of: file)
            guard size > Int64(first.count), total < 0 || size < total else { continue }
            guard let reader = try? FileHandle(forReadingFrom: file) else { continue }
            let prefix = try? reader.read(upToCount: first.count)
            try? reader.close()
            guard prefix == first else { continue }
            let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
            let date = attributes?[.modificationDate] as? Date ?? .distantPast
            if let current = best, current.date >= date { continue }
            best = (name, size, date)
        }
        guard let best else { return nil }
        let blob = ResumeData(downloadURL: run.url.absoluteString, bytesReceived: best.size, entityTag: etag,
                              serverDownloadDate: lastModified, tempFileName: best.name)
        return try? blob.encoded(as: .keyedArchive)
    }

    /// The Pause button: cancel, and let the next resume find the temporary file again.
    private func pause() {
        run.userPressed("Pause", log: "pause")
        task?.cancel(byProducingResumeData: { _ in
            guard self.completion != nil else { return }
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
        let destination = run.file.appendingPathComponent(run.url.lastPathComponent)
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
            // Its resume data is not looked at: the temporary file is still in tmp.
            run.log("download failed: \(error.localizedDescription)")
            return finish(.failed(error))
        }
        finish(refusal.map { AttemptResult.failed($0) } ?? .finished)
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
