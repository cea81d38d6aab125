/// Exercise 00: the article's code from Sources/lesson-00-small-file/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 00   build this and run it against the lab server
///     swift run lab exercise hint 00    a hint for the first check that fails
///     swift run lab exercise watch 00   check again on every save
///     swift run lab exercise reset 00   back to this starting code
///
/// Read Lessons/00-small-file.md next to this file. This file was made by `lab exercise reset`.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Takes whatever the call hands back and saves it.
final class ArticleDownload: LessonDownload {
    private let run: LessonRun
    private let way: SmallFileWay

    init(_ run: LessonRun, way: SmallFileWay) {
        self.run = run
        self.way = way
    }

    func downloadFile() -> AttemptResult {
        let (data, _, _) = fetchInOneCall(URLRequest(url: run.url), way, run)
        // Defect: neither the error nor the status code is looked at. A 404's error page is
        // saved as "the file"; a broken transfer saves nothing and still counts as done.
        try? data?.write(to: run.file)
        run.log("got \(data?.count ?? 0) bytes in one piece and saved them")
        return .finished
    }
}
