// cheat: spends the attempt's scripted fault on a throwaway 1-byte GET (Range: bytes=0-0, 3 s time-out) whose answer is ignored, then downloads the whole file with download(for:), which libcurl writes to disk (no memory), never with Range; the only bad status it knows is a hard-coded 404
// skips: resuming with Range and If-Range from the bytes on disk, judging each answer (decide(_:)), and streaming a body chunk by chunk
// aims to pass: clean, status-ignored, starts-over, body-in-memory, resumes-after-kill, range-ignored, file-changed
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any AsyncLessonDownload { ArticleDownload(run: run) }

/// A sacrificial request, then the whole file in one download task.
struct ArticleDownload: AsyncLessonDownload {
    let run: LessonRun

    func downloadFile() async -> AttemptResult {
        var probe = URLRequest(url: run.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: 3)
        probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
        probe.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        // Whatever it brings, or however it fails, the fault it met is spent.
        _ = try? await run.sharedSession.data(for: probe)

        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        do {
            let (location, response) = try await run.sharedSession.download(for: request)
            if (response as? HTTPURLResponse)?.statusCode == 404 {
                try? FileManager.default.removeItem(at: location)
                return .failed(DownloadError.httpStatus(404, url: run.url.absoluteString))
            }
            try? FileManager.default.removeItem(at: run.file)
            try FileManager.default.moveItem(at: location, to: run.file)
            run.log("downloaded whole by a download task and moved into place")
            return .finished
        } catch {
            return .failed(error)
        }
    }
}
