/// Lesson 01, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/01-in-memory.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun) -> any LessonDownload { CorrectedDownload(run) }

/// Checks the status, sizes the buffer once from the announced length, and writes that buffer.
final class CorrectedDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var received = Data()
    private var expectedLength: Int64 = -1
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        connection = URLConnection(request: URLRequest(url: run.url), delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            return fail(DownloadError.httpStatus(status, url: (response.url ?? run.url).absoluteString))
        }
        // A new response starts the body afresh. Reserving the announced length allocates the
        // final size once, instead of reallocating as the buffer grows. A compressed body's
        // announced length is the compressed size: the decoded one is then unknown (-1).
        expectedLength = http.value(forHTTPHeaderField: "Content-Encoding") == nil ? response.expectedContentLength : -1
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
            finish(.failed(DownloadError.lengthMismatch(expected: expectedLength, received: Int64(received.count))))
            return
        }
        do {
            // Data writes its own buffer: no copy on the way to the disk.
            try received.write(to: run.file)
            finish(.finished)
        } catch {
            finish(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
        }
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // Everything received so far was in memory only: the next attempt starts from byte 0.
        run.log("the transfer broke; \(received.count) bytes in memory are lost")
        received = Data()
        finish(.failed(error))
    }

    private func fail(_ error: any Error) {
        connection?.cancel()
        received = Data()
        finish(.failed(error))
    }

    /// Reports the attempt's end, once: a callback after the end is not a second answer.
    private func finish(_ result: AttemptResult) {
        // Cleared before the call: the next Start may hand over a new completion at once.
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
