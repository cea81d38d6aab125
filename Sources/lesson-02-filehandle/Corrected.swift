/// Lesson 02, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/02-filehandle.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun) -> any LessonDownload { CorrectedDownload(run) }

/// Writes only bytes that provably continue the partial file. `PartialFile` (LabKit) holds the
/// resume rules shared with lessons 03 and 04: Range + If-Range, and what each answer means.
final class CorrectedDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private let partial: PartialFile
    private var fileHandle: FileHandle?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) {
        self.run = run
        partial = PartialFile(run)
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        connection = URLConnection(request: partial.nextRequest(), delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        switch partial.decide(response) {
        case .append(let offset):
            openFile(writingAt: offset)
        case .replace:
            openFile(writingAt: 0)
        case .complete:
            break  // nothing is missing; the (empty) body is not written anywhere
        case .reject(let error):
            fail(error)
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let fileHandle else { return }
        // Every write is checked: a failed one stops the download, partial file kept.
        do { try partial.append(data, through: fileHandle) } catch { fail(error) }
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        closeFile()
        partial.finished()
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // The partial file and its sidecar stay on disk, ready for the next attempt.
        closeFile()
        finish(.failed(error))
    }

    /// Puts the write position at the checked `offset`, cutting off anything after it. LabKit
    /// also creates the file: `FileHandle(forWritingAtPath:)` alone is nil for a file that does
    /// not exist yet.
    private func openFile(writingAt offset: Int64) {
        do {
            fileHandle = try partial.openForWriting(at: offset)
        } catch {
            fail(error)
        }
    }

    private func closeFile() {
        try? fileHandle?.close()
        fileHandle = nil
    }

    private func fail(_ error: any Error) {
        connection?.cancel()
        closeFile()
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
