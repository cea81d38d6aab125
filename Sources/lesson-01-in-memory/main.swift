/// Lesson 01: every chunk appended to one buffer in memory, saved at the end.
///
/// Follows the NSURLConnection delegate of "IOS如何根据URL下载内容": an NSMutableData that grows
/// with each `didReceiveData` and is reset on each `didReceiveResponse` (a redirect or a
/// multipart response starts the body afresh). "NSURLConnection下载文件并监测下载进度" warns
/// that memory then grows with the file. Nothing is on disk until the end, so a broken transfer
/// leaves nothing to resume from: every attempt starts over from byte 0.
///
/// `ArticleDownload` keeps the article's logic, defects included. `CorrectedDownload` fixes them.
/// Read Lessons/01-in-memory.md next to this file.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

Lesson(
    id: "01-in-memory",
    title: "Every chunk in one buffer in memory",
    defaultSize: 64 << 20,
    defaultFaults: "drop:40pct,ok"  // the first attempt breaks at 40%: everything starts over
).run { run in
    switch run.variant {
    case .article: ArticleDownload(run)
    case .corrected: CorrectedDownload(run)
    }
}

// MARK: - The article's version

/// Appends to an NSMutableData, and hands it on as Data to save it.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var receivedData = NSMutableData()
    private var expectedLength: Int64 = -1
    private var connection: URLConnection?
    private var outcome: AttemptResult?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile() -> AttemptResult {
        outcome = nil
        let request = URLRequest(url: run.url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60)
        connection = URLConnection(request: request, delegate: self)
        // The connection exists: make the buffer for its data.
        receivedData = NSMutableData()
        RunLoop.current.run(until: { outcome != nil })
        return outcome!
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        // Called again after a redirect (or for each part of a multipart response): start afresh.
        // Defect: no look at the status, so a 404's error page becomes the data.
        receivedData.length = 0
        expectedLength = response.expectedContentLength
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        // Defect: the buffer grows chunk by chunk, with no idea of the size to come.
        receivedData.append(data)
        run.progress.update(received: Int64(receivedData.length), expected: expectedLength)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("done: the whole body, \(receivedData.length) bytes, is in the buffer")
        // Defect: handing a mutable NSData on as Swift Data copies it. For a moment the
        // whole body is in memory twice.
        let file = receivedData as Data
        try? file.write(to: run.file)
        outcome = .finished
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // Everything received so far was in memory only: the next attempt starts from byte 0.
        run.log("the transfer failed (\((error as NSError).localizedDescription)) for \(ShownURL.brief(run.url)); "
            + "the buffer is dropped")
        receivedData = NSMutableData()
        outcome = .failed(error)
    }
}

// MARK: - The corrected version

/// Checks the status, sizes the buffer once from the announced length, and writes that buffer.
final class CorrectedDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var received = Data()
    private var expectedLength: Int64 = -1
    private var connection: URLConnection?
    private var outcome: AttemptResult?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile() -> AttemptResult {
        outcome = nil
        connection = URLConnection(request: URLRequest(url: run.url), delegate: self)
        RunLoop.current.run(until: { outcome != nil })
        return outcome!
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            return fail(DownloadError.httpStatus(status, url: (response.url ?? run.url).absoluteString))
        }
        // A new response starts the body afresh. Reserving the announced length allocates the
        // final size once, instead of reallocating as the buffer grows.
        expectedLength = response.expectedContentLength
        received = Data()
        if expectedLength > 0 { received.reserveCapacity(Int(expectedLength)) }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        received.append(data)
        run.progress.update(received: Int64(received.count), expected: expectedLength)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        defer { received = Data() }
        if expectedLength >= 0, Int64(received.count) != expectedLength {
            outcome = .failed(DownloadError.lengthMismatch(expected: expectedLength, received: Int64(received.count)))
            return
        }
        do {
            // Data writes its own buffer: no copy on the way to the disk.
            try received.write(to: run.file)
            outcome = .finished
        } catch {
            outcome = .failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription))
        }
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // Everything received so far was in memory only: the next attempt starts from byte 0.
        run.log("the transfer broke; \(ByteFormat.iec(Int64(received.count))) in memory are lost")
        received = Data()
        outcome = .failed(error)
    }

    private func fail(_ error: any Error) {
        connection?.cancel()
        received = Data()
        outcome = .failed(error)
    }
}
