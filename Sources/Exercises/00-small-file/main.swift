/// Exercise 00: the article's code from Sources/lesson-00-small-file/main.swift, with
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

Lesson(
    id: "00-small-file",
    title: "A small file in one call",
    defaultSize: 4 << 20,
    defaultFaults: "",  // one call has nothing to resume: the default run is a clean one
    ways: Way.self
).run { run in
    ArticleDownload(run)
}

/// The two one-call ways, picked with `--way`.
enum Way: String, LessonWay {
    case completionHandler = "completion-handler"
    case contentsOf = "contents-of"

    var summary: String {
        switch self {
        case .completionHandler: "URLSession data task; the handler gets the whole body at once"
        case .contentsOf: "Data(contentsOf:); the thread waits until the whole body is in memory"
        }
    }
}

/// The one call, either way. The body arrives all at once: there is nothing to show progress with.
func fetchInOneCall(_ request: URLRequest, _ run: LessonRun) -> (Data?, URLResponse?, (any Error)?) {
    switch run.way(Way.self) {
    case .contentsOf:
        // No response object at all: no status code, no headers, only bytes or an error.
        do {
            return (try Data(contentsOf: request.url!), nil, nil)
        } catch {
            return (nil, nil, error)
        }
    case .completionHandler:
        return run.waitForCompletion { done in
            run.sharedSession.dataTask(with: request) { data, response, error in
                done((data, response, error))
            }.resume()
        }
    }
}

// MARK: - The article's version

/// Takes whatever the call hands back and saves it.
final class ArticleDownload: LessonDownload {
    private let run: LessonRun

    init(_ run: LessonRun) { self.run = run }

    func downloadFile() -> AttemptResult {
        let (data, _, _) = fetchInOneCall(URLRequest(url: run.url), run)
        // Defect: neither the error nor the status code is looked at. A 404's error page is
        // saved as "the file"; a broken transfer saves nothing and still counts as done.
        try? data?.write(to: run.file)
        run.log("got \(data?.count ?? 0) bytes in one piece and saved them")
        return .finished
    }
}
