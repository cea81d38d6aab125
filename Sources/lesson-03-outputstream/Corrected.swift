/// Lesson 03, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/03-outputstream.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Appends only bytes that provably continue the partial file. `PartialFile` (LabKit) holds the
/// resume rules shared with lessons 02 and 04: Range + If-Range, and what each answer means.
final class CorrectedDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private let partial: PartialFile
    private var output: OutputStream?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) {
        self.run = run
        partial = PartialFile(run)
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        // Range + If-Range when a partial file and its sidecar are on disk: if the file changed,
        // the server ignores Range and sends all of it with 200.
        connection = URLConnection(request: partial.nextRequest(), delegate: self)
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
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // The partial file and its sidecar stay on disk, ready for the next attempt.
        output?.close()
        output = nil
        finish(.failed(error))
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
