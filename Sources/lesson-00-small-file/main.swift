/// Lesson 00: a small file in one call, and what one call costs.
///
/// Follows §1 of "网络篇 - 03.NSURLConnection应用场景" (one asynchronous request whose completion
/// handler gets the data) and the synchronous download in "IOS如何根据URL下载内容". Two one-call
/// ways, chosen with `--way`:
/// - `completion-handler`: a URLSession data task; the handler gets the whole body at the end.
/// - `contents-of`: `Data(contentsOf:)`; the calling thread waits until the whole body is in memory.
/// Either way there is no progress to show, nothing to resume, and the whole body sits in memory.
///
/// `ArticleDownload` keeps the article's logic, defects included. `CorrectedDownload` fixes them.
/// Read Lessons/00-small-file.md next to this file.
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
    switch run.variant {
    case .article: ArticleDownload(run)
    case .corrected: CorrectedDownload(run)
    }
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

// MARK: - The corrected version

/// Asks for the size first, refuses what is too big to hold in memory, and checks the error, the
/// status and the length before saving anything.
final class CorrectedDownload: LessonDownload {
    /// Past this size a body belongs in a file as it arrives (lessons 02 to 04), not in memory.
    static let inMemoryLimit: Int64 = 64 << 20
    private let run: LessonRun

    init(_ run: LessonRun) { self.run = run }

    func downloadFile() -> AttemptResult {
        // A completion handler sees the response only together with the whole body, so the size
        // must be known before asking for the body: HEAD costs one round trip and no body.
        var head = URLRequest(url: run.url)
        head.httpMethod = "HEAD"
        let (_, headResponse, headError) = run.waitForCompletion { done in
            run.sharedSession.dataTask(with: head) { data, response, error in done((data, response, error)) }.resume()
        }
        if let headError { return .failed(headError) }
        guard let headResponse = headResponse as? HTTPURLResponse, headResponse.statusCode == 200 else {
            // After a redirect the answer is another URL's: the error names that one.
            return .failed(DownloadError.httpStatus((headResponse as? HTTPURLResponse)?.statusCode ?? 0,
                                                    url: (headResponse?.url ?? run.url).absoluteString))
        }
        let expected = headResponse.expectedContentLength  // -1 when the server does not say
        if expected > Self.inMemoryLimit {
            return .failed(DownloadError.tooLargeForMemory(bytes: expected, limit: Self.inMemoryLimit))
        }

        let (data, response, error) = fetchInOneCall(URLRequest(url: run.url), run)
        if let error { return .failed(error) }
        // Data(contentsOf:) hands back no response; a data task's must say 200.
        if let response = response as? HTTPURLResponse, response.statusCode != 200 {
            return .failed(DownloadError.httpStatus(response.statusCode, url: (response.url ?? run.url).absoluteString))
        }
        guard let data else { return .failed(URLError(.zeroByteResource)) }
        if expected >= 0, Int64(data.count) != expected {
            return .failed(DownloadError.lengthMismatch(expected: expected, received: Int64(data.count)))
        }
        do {
            try data.write(to: run.file)
        } catch {
            return .failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription))
        }
        run.log("got \(data.count) bytes in one piece, as announced, and saved them")
        return .finished
    }
}
