/// Lesson 09, the article's variant: the strategy as the article writes it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/09-background-session.md explains it.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any BackgroundApp { ArticleApp(run) }

/// A Start button and a download task, with the resume data kept in a property.
final class ArticleApp: NSObject, BackgroundApp, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // session's serial delegate queue.
    private let run: LessonRun
    private var task: URLSessionDownloadTask?
    // Defect: resume data lives in the app's memory, and goes when the system ends the app.
    private var partialData: Data?

    init(_ run: LessonRun) { self.run = run }

    // Defect: no session is made at launch, so events that wait for a session are never delivered.
    func didFinishLaunching() {}

    // Defect: the completion handler is never kept, so it is never called.
    func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping @Sendable () -> Void) {}

    func startTapped() {
        // Defect: a default session, made for every download: its transfer runs in the app's
        // process, and ends with it.
        let session = run.makeSession(configuration: .default, delegate: self, delegateQueue: nil)
        task = partialData.map(session.downloadTask(withResumeData:)) ?? session.downloadTask(with: run.url)
        task?.resume()
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        try? FileManager.default.removeItem(at: run.file)
        do {
            try FileManager.default.moveItem(at: location, to: run.file)
        } catch {
            run.log("cannot move the file: \(error.localizedDescription)")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error = error as? URLError else { return }
        // Defect: any failure is retried, a force-quit's cancellation too.
        partialData = error.downloadTaskResumeData
        run.log("the download failed: \(error.localizedDescription); trying again")
        startTapped()
    }
}
