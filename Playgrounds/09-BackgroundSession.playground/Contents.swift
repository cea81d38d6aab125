//: # Lesson 09: a background session
//:
//: The app delegate and the download delegate of an app whose download goes on without it:
//: one session, made at launch with the same identifier every time; the file moved before
//: `didFinishDownloadingTo` returns; the system's completion handler kept, and called on the main
//: queue once `urlSessionDidFinishEvents(forBackgroundURLSession:)` says every event is in; a
//: force-quit's cancellation reported, not retried. Run `swift run lab serve` in a terminal first.
//:
//: A playground is no app: nothing suspends it or relaunches it, so what it shows is the shape of
//: the code and one download. The lab's lesson 09 plays the app's life around the same code. On a
//: Mac the session below is a real background session, run by the system's nsurlsessiond; Foundation
//: on Linux has no background configuration, so there it is a default one and the page says so.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: Change the port if `lab serve` printed another one.
let url = URL(string: "http://127.0.0.1:8080/fixtures/demo?size=8MiB")!
let identifier = "com.example.download-lab.playground-09"

//: The app's Documents folder; here a folder in the temporary directory.
let documents = FileManager.default.temporaryDirectory.appendingPathComponent("lesson-09-playground", isDirectory: true)
try? FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
let destination = documents.appendingPathComponent("demo.bin")

final class AppDownloads: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: the session calls one method at a time on its serial queue; the completion
    // handler is only touched on the main queue.
    let destination: URL
    /// What `application(_:handleEventsForBackgroundURLSession:completionHandler:)` hands over.
    var backgroundCompletionHandler: (() -> Void)?
    let finished = DispatchSemaphore(value: 0)

    init(destination: URL) { self.destination = destination }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        guard totalBytesExpectedToWrite > 0 else { return }
        let quarter = totalBytesWritten * 4 / totalBytesExpectedToWrite
        if quarter > (totalBytesWritten - bytesWritten) * 4 / totalBytesExpectedToWrite { print("  \(quarter * 25)%") }
    }

    // The system deletes `location` when this method returns: move it here, not later.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        let status = (downloadTask.response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200...299).contains(status) else { return print("  HTTP \(status): no file") }
        try? FileManager.default.removeItem(at: destination)
        do {
            try FileManager.default.moveItem(at: location, to: destination)
            print("  moved to \(destination.path)")
        } catch {
            print("  cannot move the file: \(error.localizedDescription)")
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        defer { finished.signal() }
        guard let error = error as? URLError else { return print("  done") }
        // A force-quit is the user's "stop": report it, and wait for Start.
        if (error.userInfo[NSURLErrorBackgroundTaskCancelledReasonKey] as? Int) == NSURLErrorCancelledReasonUserForceQuitApplication {
            return print("  cancelled: the user force-quit the app")
        }
        print("  failed: \(error.localizedDescription)")
    }

    // The system calls this once every event that waited for the app is delivered (Foundation on
    // Linux has no such call; the lab's lesson 09 makes it).
    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        DispatchQueue.main.async {
            self.backgroundCompletionHandler?()
            self.backgroundCompletionHandler = nil
        }
    }
}

//: One session, made at launch, with the same identifier at every launch.
#if canImport(FoundationNetworking)
let configuration = URLSessionConfiguration.default  // Linux: no background configuration
#else
let configuration = URLSessionConfiguration.background(withIdentifier: identifier)
#endif
let downloads = AppDownloads(destination: destination)
let session = URLSession(configuration: configuration, delegate: downloads, delegateQueue: nil)

//: Start: a download task, never one with a completion handler (a background session refuses it).
print("download \(url)")
session.downloadTask(with: url).resume()
downloads.finished.wait()
session.finishTasksAndInvalidate()
