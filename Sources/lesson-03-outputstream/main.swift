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

/// Appends only bytes that provably continue the partial file. `PartialFile` (LabKit) holds the
/// resume rules shared with lessons 02 and 04: Range + If-Range, and what each answer means.
final class CorrectedDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private let partial: PartialFile
    private var output: OutputStream?
    private var connection: URLConnection?
    private var outcome: AttemptResult?

    init(_ run: LessonRun) {
        self.run = run
        partial = PartialFile(run)
    }

    func downloadFile() -> AttemptResult {
        outcome = nil
        // Range + If-Range when a partial file and its sidecar are on disk: if the file changed,
        // the server ignores Range and sends all of it with 200.
        connection = URLConnection(request: partial.nextRequest(), delegate: self)
        RunLoop.current.run(until: { outcome != nil })
        return outcome!
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        switch partial.decide(response) {
        case .append:
            open(append: true)
        case .replace:
            open(append: false)
        case .complete:
            break  // nothing is missing; the (empty) body is not written anywhere
        case .reject(let error):
            fail(error)
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let output else { return }
        // `append` checks write's return value: a short write (a full disk) is an error here.
        do { try partial.append(data, through: output) } catch { fail(error) }
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        output?.close()
        output = nil
        partial.finished()
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
}
