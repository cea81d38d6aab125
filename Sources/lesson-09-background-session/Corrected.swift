/// Lesson 09, the corrected variant: a background session, used as Apple's rules require.
/// Lessons/09-background-session.md explains each rule.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun) -> any BackgroundApp { CorrectedApp(run) }

/// The app delegate and the download's delegate in one, as small apps write it.
final class CorrectedApp: NSObject, BackgroundApp, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // session's serial delegate queue; the app delegate's calls run on the main queue, and the
    // one value both touch, the completion handler, is only read and written there.
    private let run: LessonRun
    private var session: URLSession!
    /// The system's handler from a launch for background events: called once every event is in.
    private var backgroundCompletionHandler: (@Sendable () -> Void)?
    /// The system has retried already before it gives up: the app resumes a few times more, not
    /// for ever (a server that is down stays down).
    private var resumesLeft = 2

    init(_ run: LessonRun) { self.run = run }

    /// At every launch, by the user or by the system, and always with the same identifier: the
    /// events that waited for the app are delivered to the session made here, and only then.
    func didFinishLaunching() {
        let configuration = URLSessionConfiguration.background(withIdentifier: App.sessionIdentifier)
        session = run.makeSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// The session made at launch receives the events; the handler waits for the last of them.
    func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping @Sendable () -> Void) {
        backgroundCompletionHandler = completionHandler
    }

    /// One session, one download: after a relaunch the service may still be running the last one.
    func startTapped() {
        session.getAllTasks { tasks in
            guard tasks.isEmpty else { return self.run.log("a download is running already, in the background") }
            self.session.downloadTask(with: self.run.url).resume()
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
    }

    /// The system deletes `location` as soon as this method returns: the file moves now, not later.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard let response = downloadTask.response as? HTTPURLResponse, (200...299).contains(response.statusCode) else {
            return run.log("the server answered \((downloadTask.response as? HTTPURLResponse)?.statusCode ?? 0): no file")
        }
        do {
            try? FileManager.default.removeItem(at: run.file)
            try FileManager.default.moveItem(at: location, to: run.file)
            run.log("moved the file to \(run.file.lastPathComponent)")
        } catch {
            run.log("cannot move the file: \(error.localizedDescription)")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error = error as? URLError else { return }  // finished: the file was moved above
        if error.backgroundTaskCancelledReason == .userForceQuitApplication {
            // The user swiped the app away: a wish to stop, not a failure to retry.
            return run.log("cancelled because the user force-quit the app (NSURLErrorBackgroundTaskCancelledReasonKey: "
                           + "userForceQuitApplication); Start downloads it again")
        }
        if let resumeData = error.downloadTaskResumeData, resumesLeft > 0 {
            // The system retried and gave up; its resume data goes on from where the file ends.
            resumesLeft -= 1
            run.log("the download failed (\(error.localizedDescription)): resuming from its resume data")
            return session.downloadTask(withResumeData: resumeData).resume()
        }
        run.log("the download failed: \(error.localizedDescription)")
    }

    /// Every event is in: the system's handler runs now, on the main queue, as UIKit requires.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        DispatchQueue.main.async {
            self.backgroundCompletionHandler?()
            self.backgroundCompletionHandler = nil
        }
    }
}
