/// Exercise 08: the article's code from Sources/lesson-08-async-await/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 08   build this and run it against the lab server
///     swift run lab exercise hint 08    a hint for the first check that fails (or: hint 08 <check>)
///     swift run lab exercise watch 08   check again on every save
///     swift run lab exercise reset 08   back to this starting code
///
/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`
/// and the lab gives the lesson's exit status and a one-line message:
///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69
///     .localIO (a write failed: the disk is full)                               exit 74
///     a file called done that is not the server's                               exit 65
///
/// What LabKit gives the fix (Lessons/08-async-await.md has them with more words):
///     let partial = PartialFile(run)              the file at run.file, with a sidecar that keeps its URL, ETag and total
///     partial.nextRequest()                       the request for what is missing: Range and If-Range, Accept-Encoding: identity
///     run.sharedSession.bodyChunks(for: request)  (chunks, response) once the head is in; `for try await chunk in chunks`
///     partial.decide(response)                    .append(at: offset), .replace (a 200: from 0), .complete, .reject(error)
///     try partial.openForWriting(at: offset)      a FileHandle from offset on, the rest cut off
///     try partial.append(data, through: handle)   writes the bytes at the end and counts them
///     partial.finished()                          the file is whole: the sidecar goes
///     DownloadError.httpStatus(status, url: run.url.absoluteString), .contentRangeMismatch(expectedStart:header:)
///
/// Swift 6 checks data races. A completion handler or a delegate callback runs on another
/// thread, so the compiler refuses a plain `var` that it changes. The lessons keep such state
/// in a Mutex (`import Synchronization`), which locks every read and write:
///     let received = Mutex<Data?>(nil)
///     session.dataTask(with: request) { data, _, _ in received.withLock { $0 = data } }.resume()
///     ... later: let data = received.withLock { $0 }
/// A delegate whose callbacks all run one at a time on its session's serial delegate queue
/// may say so instead: `@unchecked Sendable`, with a comment why (lessons 04 and 05).
///
/// Read Lessons/08-async-await.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any AsyncLessonDownload { ArticleDownload(run: run) }

/// One call for the whole body, then one write.
struct ArticleDownload: AsyncLessonDownload {
    let run: LessonRun

    func downloadFile() async -> AttemptResult {
        do {
            let (data, _) = try await run.sharedSession.data(from: run.url)
            try data.write(to: run.file)
            run.log("got \(data.count) bytes in one piece and saved them")
            return .finished
        } catch {
            return .failed(error)
        }
    }
}
