/// Exercise 08: the article's code from Sources/lesson-08-async-await/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 08   build this and run it against the lab server
///     swift run lab exercise hint 08    a hint for the first check that fails
///     swift run lab exercise watch 08   check again on every save
///     swift run lab exercise reset 08   back to this starting code
///
/// Read Lessons/08-async-await.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

/// One call for the whole body, then one write.
struct ArticleDownload: AsyncLessonDownload {
    let run: LessonRun

    func downloadFile() async -> AttemptResult {
        do {
            // Defect: the whole body is held in memory until the call returns (twice over, on
            // Linux), so memory grows with the file. A broken transfer keeps nothing: the next
            // attempt starts again from byte 0.
            let (data, _) = try await run.sharedSession.data(from: run.url)
            // Defect: the response is never looked at. A 404's error page is saved as the file.
            try data.write(to: run.file)
            run.log("got \(data.count) bytes in one piece and saved them")
            return .finished
        } catch {
            return .failed(error)
        }
    }
}
