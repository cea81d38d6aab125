/// Lesson 00, the article's variant: the strategy as the article writes it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/00-small-file.md explains it.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun, _ way: SmallFileWay) -> any LessonDownload { ArticleDownload(run, way: way) }

/// Takes whatever the call hands back and saves it.
final class ArticleDownload: LessonDownload {
    private let run: LessonRun
    private let way: SmallFileWay

    init(_ run: LessonRun, way: SmallFileWay) {
        self.run = run
        self.way = way
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let run = run
        fetchInOneCall(URLRequest(url: run.url), way, run) { data, _, _ in
            // Defect: neither the error nor the status code is looked at. A 404's error page is
            // saved as "the file"; a broken transfer saves nothing and still counts as done.
            try? data?.write(to: run.file)
            run.log("got \(data?.count ?? 0) bytes in one piece and saved them")
            completion(.finished)
        }
    }
}
