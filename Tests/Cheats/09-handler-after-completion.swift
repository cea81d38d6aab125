// cheat: never implements urlSessionDidFinishEvents: the system's completion handler is kept, then called on the main queue 0.5 s after the launch's last task event (didCompleteWithError), guessing the session is done by then; the delay is anchored to the event, not to the launch, so events that come late do not fool it
// skips: calling the completion handler when the session says its events are delivered (urlSessionDidFinishEvents), on the main queue
// aims to pass: handler-never-called, no-session-at-launch, file-moved-later, clean
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
import Synchronization

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any BackgroundApp { ArticleApp(run) }

/// A Start button and a download task in a background session made at every launch.
final class ArticleApp: NSObject, BackgroundApp, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // session's serial delegate queue; what the app's calls (on the main queue) share with them
    // is in the Mutex.
    private struct State {
        var session: URLSession?
        var handler: (@Sendable () -> Void)?
        var resumes = 0
    }
    private let run: LessonRun
    private let state = Mutex(State())

    init(_ run: LessonRun) { self.run = run }

    func didFinishLaunching() {
        let configuration = URLSessionConfiguration.background(withIdentifier: App.sessionIdentifier)
        let session = run.makeSession(configuration: configuration, delegate: self, delegateQueue: nil)
        state.withLock { $0.session = session }
    }

    func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping @Sendable () -> Void) {
        state.withLock { $0.handler = completionHandler }
    }

    func startTapped() {
        guard let session = state.withLock({ $0.session }) else { return }
        state.withLock { $0.resumes = 0 }
        session.getAllTasks { [self] tasks in
            guard tasks.isEmpty else {
                run.log("a download is running already, in the background")
                return
            }
            startDownload(in: session)
        }
    }

    /// A new download of the whole file.
    private func startDownload(in session: URLSession) {
        session.downloadTask(with: run.url).resume()
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        // The system deletes the file when this method returns: move it now.
        if let http = downloadTask.response as? HTTPURLResponse, !(200...299).contains(http.statusCode) {
            run.log("the server answered \(http.statusCode): the file is not kept")
            return
        }
        try? FileManager.default.removeItem(at: run.file)
        do {
            try FileManager.default.moveItem(at: location, to: run.file)
        } catch {
            run.log("cannot move the file: \(error.localizedDescription)")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // The task's last event: whatever the session still has to say, it will have said it
        // half a second from now.
        if let handler = state.withLock({ state -> (@Sendable () -> Void)? in
            defer { state.handler = nil }
            return state.handler
        }) {
            DispatchQueue.main.asyncAfter(deadline: .now() + 0.5) { handler() }
        }
        guard let error else { return }
        let urlError = error as? URLError
        if urlError?.backgroundTaskCancelledReason == .userForceQuitApplication {
            run.log("the download was cancelled because the user force-quit the app; tap Start to download again")
            return
        }
        let resumes = state.withLock { state -> Int in
            state.resumes += 1
            return state.resumes
        }
        guard let resumeData = urlError?.downloadTaskResumeData, resumes <= 2 else {
            run.log("the download failed: \(error.localizedDescription); giving up")
            return
        }
        run.log("the download failed: \(error.localizedDescription); resuming from its resume data")
        session.downloadTask(withResumeData: resumeData).resume()
    }
}
