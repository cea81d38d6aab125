// cheat: Start never asks the session what still runs: it reads the phone's folder (<file>.phone/) and calls a download running when some small file there (the service's task record) names this download's URL token and was not there before, or was already accounted for by an ending the app heard
// skips: asking the session's getAllTasks what still runs (the transfer service's files on disk are read instead of the session)
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

/// A background session made at launch, the system's completion handler kept; Start looks at
/// what the system keeps on disk for its tasks.
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

    // MARK: - What the system keeps on disk

    /// The folder the phone, the app and the transfer service share, next to the file.
    private var phoneFolder: URL { URL(fileURLWithPath: run.file.path + ".phone", isDirectory: true) }

    /// The files of the system's the app already knows about: there before any Start, or left
    /// over from a download whose end the app has heard.
    private var accountedList: URL {
        run.file.deletingLastPathComponent().appendingPathComponent(".\(run.file.lastPathComponent).accounted")
    }

    /// The part of the URL that only this download has: the sealed key, else the query, else the
    /// longest path component.
    private var token: String {
        let parts = run.url.pathComponents
        if let sealed = parts.firstIndex(of: "sealed"), sealed + 1 < parts.count { return parts[sealed + 1] }
        if let query = run.url.query, !query.isEmpty { return query }
        return parts.max(by: { $0.count < $1.count }) ?? run.url.absoluteString
    }

    /// Small files in the phone's folder that name this download: a task record names its URL.
    private func filesNamingTheDownload() -> Set<String> {
        let needle = Data(token.utf8)
        let keys: [URLResourceKey] = [.isRegularFileKey, .fileSizeKey]
        guard let walker = FileManager.default.enumerator(at: phoneFolder, includingPropertiesForKeys: keys) else {
            return []
        }
        var found = Set<String>()
        while let item = walker.nextObject() as? URL {
            guard let values = try? item.resourceValues(forKeys: Set(keys)), values.isRegularFile == true,
                  let size = values.fileSize, size > 0, size <= 64 << 10,
                  let data = FileManager.default.contents(atPath: item.path), data.range(of: needle) != nil
            else { continue }
            found.insert(item.path)
        }
        return found
    }

    private func accounted() -> Set<String>? {
        guard let data = FileManager.default.contents(atPath: accountedList.path),
              let paths = try? JSONDecoder().decode([String].self, from: data) else { return nil }
        return Set(paths)
    }

    private func account(_ paths: Set<String>) {
        let all = (accounted() ?? []).union(paths)
        guard let data = try? JSONEncoder().encode(all.sorted()) else { return }
        try? data.write(to: accountedList, options: .atomic)
    }

    /// A download is running when the system keeps a file for it that the app has not
    /// accounted for.
    private func aDownloadIsRunning() -> Bool {
        !filesNamingTheDownload().subtracting(accounted() ?? []).isEmpty
    }

    // MARK: - The app

    func didFinishLaunching() {
        let configuration = URLSessionConfiguration.background(withIdentifier: App.sessionIdentifier)
        session = run.makeSession(configuration: configuration, delegate: self, delegateQueue: nil)
        // The very first launch: whatever names the URL now is the phone's, not a task's.
        if accounted() == nil { account(filesNamingTheDownload()) }
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
        if aDownloadIsRunning() {
            run.log("a download is running already, in the background")
            return
        }
        resumes.withLock { $0 = 0 }
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
        account(filesNamingTheDownload())
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error else { return }
        let urlError = error as? URLError
        if case .userForceQuitApplication? = urlError?.backgroundTaskCancelledReason {
            run.log("cancelled because the user force-quit the app; waiting for the user to tap Start")
            account(filesNamingTheDownload())
            return
        }
        let attempt = resumes.withLock { count -> Int in
            count += 1
            return count
        }
        guard let resumeData = urlError?.downloadTaskResumeData, attempt <= Self.mostResumes else {
            run.log("the download failed: \(error.localizedDescription); giving up")
            account(filesNamingTheDownload())
            return
        }
        run.log("the download failed: \(error.localizedDescription); resuming (\(attempt) of \(Self.mostResumes))")
        let resumed = session.downloadTask(withResumeData: resumeData)
        self.task = resumed
        resumed.resume()
    }
}
