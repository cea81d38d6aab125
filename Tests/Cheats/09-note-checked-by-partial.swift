// cheat: Start never asks the session what still runs: it writes a note at Start (before resume, as 09-start-marker does) but trusts it only when the phone's folder holds a big file (the service's partial download) written after the note, so a note left by a crash inside resume() is taken as stale
// skips: asking the session's getAllTasks what still runs (the app's own note, checked against the service's partial file on disk)
// aims to pass: clean, default-session, file-moved-later, no-session-at-launch, handler-never-called, retries-force-quit, session-per-download, resumes-after-kill, starts-one-download, starts-after-a-crash, resumes-with-a-limit, resumes-what-the-system-gave-up
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import Synchronization

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any BackgroundApp { ArticleApp(run) }

/// A background session made at launch, the system's completion handler kept, and Start
/// guarded by a note the app writes itself, which the system's files must bear out.
final class ArticleApp: NSObject, BackgroundApp, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // session's serial delegate queue; `session` is set once, at launch, before any tap.
    private let run: LessonRun
    private var session: URLSession?
    private var task: URLSessionDownloadTask?
    private let eventsHandler = Mutex<(@Sendable () -> Void)?>(nil)
    private let resumes = Mutex(0)
    private static let mostResumes = 2

    init(_ run: LessonRun) { self.run = run }

    /// "A download is out": beside the file, under a name of its own.
    private var note: URL {
        run.file.deletingLastPathComponent().appendingPathComponent(".\(run.file.lastPathComponent).downloading")
    }

    private func dropNote() { try? FileManager.default.removeItem(at: note) }

    /// The folder the phone, the app and the transfer service share, next to the file.
    private var phoneFolder: URL { URL(fileURLWithPath: run.file.path + ".phone", isDirectory: true) }

    /// The note stands when the service has written a download's worth of bytes since it was
    /// made: a partial file (64 KiB or more) in the phone's folder, changed after the note.
    private func noteStands() -> Bool {
        guard let noted = (try? FileManager.default.attributesOfItem(atPath: note.path))?[.modificationDate] as? Date
        else { return false }
        let keys: [URLResourceKey] = [.isRegularFileKey, .fileSizeKey, .contentModificationDateKey]
        guard let walker = FileManager.default.enumerator(at: phoneFolder, includingPropertiesForKeys: keys) else {
            return false
        }
        while let item = walker.nextObject() as? URL {
            guard let values = try? item.resourceValues(forKeys: Set(keys)), values.isRegularFile == true,
                  let size = values.fileSize, size >= 64 << 10,
                  let changed = values.contentModificationDate, changed >= noted
            else { continue }
            return true
        }
        return false
    }

    func didFinishLaunching() {
        let configuration = URLSessionConfiguration.background(withIdentifier: App.sessionIdentifier)
        session = run.makeSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    func handleEventsForBackgroundURLSession(_ identifier: String, completionHandler: @escaping @Sendable () -> Void) {
        eventsHandler.withLock { $0 = completionHandler }
    }

    func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        let handler = eventsHandler.withLock { kept -> (@Sendable () -> Void)? in
            let handler = kept
            kept = nil
            return handler
        }
        guard let handler else { return }
        DispatchQueue.main.async { handler() }
    }

    func startTapped() {
        guard let session else { return }
        if FileManager.default.fileExists(atPath: note.path) {
            if noteStands() {
                run.log("a download is running already, in the background")
                return
            }
            run.log("an old note, and nothing downloaded since: starting again")
        }
        resumes.withLock { $0 = 0 }
        FileManager.default.createFile(atPath: note.path, contents: Data())
        let task = session.downloadTask(with: run.url)
        self.task = task
        task.resume()
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
        dropNote()
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error else { return }
        let urlError = error as? URLError
        if case .userForceQuitApplication? = urlError?.backgroundTaskCancelledReason {
            run.log("cancelled because the user force-quit the app; waiting for the user to tap Start")
            dropNote()
            return
        }
        let attempt = resumes.withLock { count -> Int in
            count += 1
            return count
        }
        guard let resumeData = urlError?.downloadTaskResumeData, attempt <= Self.mostResumes else {
            run.log("the download failed: \(error.localizedDescription); giving up")
            dropNote()
            return
        }
        run.log("the download failed: \(error.localizedDescription); resuming (\(attempt) of \(Self.mostResumes))")
        let resumed = session.downloadTask(withResumeData: resumeData)
        self.task = resumed
        resumed.resume()
    }
}
