/// Lesson 04, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/04-session-data-task.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun) -> any LessonDownload { CorrectedDownload(run) }

/// Writes only bytes that provably continue the partial file. `PartialFile` (LabKit) holds the
/// resume rules shared with lessons 02 and 03: Range + If-Range, and what each answer means.
final class CorrectedDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the task starts.
    private let run: LessonRun
    private let partial: PartialFile
    private var fileHandle: FileHandle?
    private var failure: (any Error)?  // a reason of our own to stop, which outranks "cancelled"
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)

    init(_ run: LessonRun) {
        self.run = run
        partial = PartialFile(run)
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        (failure, self.completion) = (nil, completion)
        session.dataTask(with: partial.nextRequest()).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        switch partial.decide(response) {
        case .append(let offset):
            openFile(writingAt: offset)
        case .replace:
            openFile(writingAt: 0)
        case .complete:
            break  // nothing is missing; the (empty) body is not written anywhere
        case .reject(let error):
            failure = error
        }
        // Refusing the body here is the clean way to stop a data task: no cancel() from inside
        // the delegate queue, where it would wait for that very queue.
        completionHandler(failure == nil ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let fileHandle, failure == nil else { return }
        do {
            try partial.append(data, through: fileHandle)
        } catch {
            failure = error
            // A plain cancel() from this queue would wait for the session's work queue, which waits
            // for this queue; from elsewhere it would land only when the body ends.
            dataTask.cancelAtOnce()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? fileHandle?.close()
        fileHandle = nil
        if let failure {
            finish(.failed(failure))
        } else if let error {
            // The partial file and its sidecar stay on disk, ready for the next attempt.
            finish(.failed(error))
        } else {
            partial.finished()
            // A session keeps its delegate alive until it is invalidated.
            session.finishTasksAndInvalidate()
            finish(.finished)
        }
    }

    /// Opens the file (creating it if need be) with the write position at the checked `offset`;
    /// anything after it is cut off.
    private func openFile(writingAt offset: Int64) {
        do {
            fileHandle = try partial.openForWriting(at: offset)
        } catch {
            failure = error
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
