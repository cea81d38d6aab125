/// Lesson 03: download to disk with an OutputStream opened for appending, and resume with Range.
///
/// Follows "NSURLConnection下载文件并监测下载进度" (its OutputStream download with a HEAD request for
/// the total) and §4 of "网络篇 - 03.NSURLConnection应用场景". Memory stays flat because each chunk
/// goes to the file as it arrives instead of into one growing buffer. A broken download resumes
/// from the size of the partial file with `Range: bytes=N-`.
///
/// `ArticleDownload` keeps the article's logic, defects included. `CorrectedDownload` fixes them.
/// Read Lessons/03-outputstream.md next to this file.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

Lesson(
    id: "03-outputstream",
    title: "OutputStream append, resumed with Range",
    defaultSize: 64 << 20,
    defaultFaults: "drop:40pct,ok"  // the first attempt breaks at 40%, the second one behaves
).run { run in
    switch run.variant {
    case .article: ArticleDownload(run)
    case .corrected: CorrectedDownload(run)
    }
}

// MARK: - The article's version

/// Asks the server for the total with HEAD, reads the local size, and appends whatever arrives.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var fileSize: Int64 = 0     // the whole file, as the HEAD request reported it
    private var currentSize: Int64 = 0  // how much is on disk
    private var output: OutputStream?
    private var connection: URLConnection?
    private var outcome: AttemptResult?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile() -> AttemptResult {
        outcome = nil
        getServerFileSize()
        getLocalFileSize()

        // Defect: equal sizes are taken to mean "complete". Nothing checks that the bytes on
        // disk belong to the file the server has now.
        if currentSize == fileSize {
            run.log("the file is already downloaded; not downloading it again")
            return .finished
        }
        // A local file larger than the server's must be broken: delete it and start over.
        if currentSize > fileSize {
            try? FileManager.default.removeItem(at: run.file)
            currentSize = 0
        }

        var request = URLRequest(url: run.url)
        request.setValue("bytes=\(currentSize)-", forHTTPHeaderField: "Range")
        connection = URLConnection(request: request, delegate: self)
        // Callbacks arrive on the run loop of the thread that started the connection.
        RunLoop.current.run(until: { outcome != nil })
        return outcome!
    }

    /// Defect: an extra round trip on every start, although a 206's Content-Range carries the total.
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
        // Defect: no look at the status. A 200 carrying the whole file (Range ignored), or a 206
        // of a file that has changed, is appended after the bytes already on disk.
        output = OutputStream(toFileAtPath: run.file.path, append: true)
        output?.open()
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        currentSize += Int64(data.count)
        run.progress.update(received: currentSize, expected: fileSize)
        // Defect: the number of bytes actually written is ignored.
        _ = output?.write(data)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        output?.close()
        outcome = .finished
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed, please download again")
        outcome = .failed(error)
    }
}

// MARK: - The corrected version

/// Appends only bytes that provably continue the partial file, and remembers what the partial
/// file is part of (URL, validator, total) in a sidecar next to it.
final class CorrectedDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var resumeState: ResumeState?  // what the partial file on disk belongs to
    private var written: Int64 = 0         // bytes on disk that belong to this resource
    private var total: Int64 = -1          // the whole file, from Content-Range or a 200's length
    private var output: OutputStream?
    private var connection: URLConnection?
    private var outcome: AttemptResult?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile() -> AttemptResult {
        outcome = nil
        // A partial file is only worth resuming together with its sidecar: the validator in it
        // lets the server tell us whether those bytes still belong to the file it has now.
        resumeState = ResumeState.load(for: run.file).flatMap { $0.url == run.url.absoluteString ? $0 : nil }
        written = resumeState == nil ? 0 : localFileSize()

        var request = URLRequest(url: run.url)
        if let resumeState, written > 0 {
            request.setValue(rangeHeader(from: written), forHTTPHeaderField: "Range")
            // If the file changed, the server ignores Range and sends all of it with 200.
            request.setValue(resumeState.validator, forHTTPHeaderField: "If-Range")
        }
        connection = URLConnection(request: request, delegate: self)
        RunLoop.current.run(until: { outcome != nil })
        return outcome!
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        guard let response = response as? HTTPURLResponse else {
            return fail(DownloadError.httpStatus(0, url: run.url.absoluteString))
        }
        switch response.statusCode {
        case 206:
            // Append only the bytes that come next: the range must start where the file ends.
            guard case .bytes(let first, _, let total?)? = response.contentRange, first == written else {
                return fail(DownloadError.contentRangeMismatch(
                    expectedStart: written, header: response.value(forHTTPHeaderField: "Content-Range")))
            }
            self.total = total
            open(append: true)
        case 200:
            // The whole file is coming: no Range was sent, the server ignored it, or the file
            // changed and If-Range did not match. The bytes on disk are no use: start over.
            if written > 0 { run.log("the server sent the whole file (200): starting over from byte 0") }
            written = 0
            total = response.expectedContentLength
            open(append: false)
        case 416:
            // Nothing left to send. That means "complete" only if the lengths agree and the
            // server still has the file the partial one came from.
            let sameFile = response.resumeValidator == nil || response.resumeValidator == resumeState?.validator
            if case .unsatisfied(let total)? = response.contentRange, total == written,
               total == resumeState?.total, sameFile {
                self.total = total
                return
            }
            run.log("the partial file does not match the server's file: deleting it and starting over")
            return startOver()
        default:
            return fail(DownloadError.httpStatus(response.statusCode, url: run.url.absoluteString))
        }
        // Remember what these bytes are part of before the first one lands on disk. Without a
        // validator a later resume could splice two versions, so then keep no sidecar.
        if let validator = response.resumeValidator {
            do {
                try ResumeState(url: run.url.absoluteString, validator: validator, total: total).save(for: run.file)
            } catch {
                return fail(DownloadError.localIO(path: run.file.path, reason: "cannot save the resume state"))
            }
        } else {
            ResumeState.remove(for: run.file)
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let output else { return }
        let count = output.write(data)
        guard count == data.count else {
            // Not output.streamError: reading it traps in Foundation on Linux.
            let reason = "write returned \(count) for \(data.count) bytes (disk full?)"
            return fail(DownloadError.localIO(path: run.file.path, reason: reason))
        }
        written += Int64(count)
        run.progress.update(received: written, expected: total)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        output?.close()
        output = nil
        // The file is whole; the sidecar has done its job.
        ResumeState.remove(for: run.file)
        outcome = .finished
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // The partial file and its sidecar stay on disk, ready for the next attempt.
        output?.close()
        output = nil
        outcome = .failed(error)
    }

    private func open(append: Bool) {
        output = OutputStream(toFileAtPath: run.file.path, append: append)
        output?.open()
        if output?.streamStatus != .open {
            fail(DownloadError.localIO(path: run.file.path, reason: "cannot open it for writing"))
        }
    }

    private func fail(_ error: any Error) {
        connection?.cancel()
        output?.close()
        output = nil
        outcome = .failed(error)
    }

    private func startOver() {
        connection?.cancel()
        try? FileManager.default.removeItem(at: run.file)
        ResumeState.remove(for: run.file)
        resumeState = nil
        written = 0
        connection = URLConnection(request: URLRequest(url: run.url), delegate: self)
    }

    private func localFileSize() -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: run.file.path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}
