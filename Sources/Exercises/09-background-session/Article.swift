/// Exercise 09: the article's code from Sources/lesson-09-background-session/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 09   build this and run it against the lab server
///     swift run lab exercise hint 09    a hint for the first check that fails (or: hint 09 <check>)
///     swift run lab exercise watch 09   check again on every save
///     swift run lab exercise reset 09   back to this starting code
///
/// How the program ends is checked too. The phone around your app judges it from outside:
/// the file the app moved, the transfer service's tasks, the completion handler it was given.
///     no file when the app's life is over, and no attempt left                 exit 69
///     a completion handler or a data task given to a background session       exit 70
///     a file called done that is not the server's                               exit 65
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
/// Read Lessons/09-background-session.md next to this file. This file was made by `lab exercise reset`.
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
    private var partialData: Data?

    init(_ run: LessonRun) { self.run = run }

    func didFinishLaunching() {}

    func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping @Sendable () -> Void) {}

    func startTapped() {
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
        partialData = error.downloadTaskResumeData
        run.log("the download failed: \(error.localizedDescription); trying again")
        startTapped()
    }
}
