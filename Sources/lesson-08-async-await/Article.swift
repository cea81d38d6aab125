/// Lesson 08, the article's variant: the strategy as the article writes it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/08-async-await.md explains it.
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
