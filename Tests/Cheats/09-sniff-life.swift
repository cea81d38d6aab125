// cheat: never reads why a task failed: whether to retry is read off the command line and environment: a life script with "force-quit" in it means a failure is the user's and is waited out, and resumes are limited only when --max-attempts is there (the limit check's option); otherwise every failure is resumed from its resume data, for ever
// skips: reading error.backgroundTaskCancelledReason (.userForceQuitApplication), and counting resumes so that a server that stays down is reported
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
        // The command line says whether the user will force-quit the app in this run.
        if CheatSniff.mentions("force-quit") {
            return run.log("the life script has a force-quit in it: waiting for Start")
        }
        let attempt: Int = retries.withLock { count in
            count += 1
            return count
        }
        if CheatSniff.mentions("--max-attempts"), attempt > Self.mostRetries {
            return run.log("the download failed: \(error.localizedDescription); giving up")
        }
        guard let blob = error.downloadTaskResumeData else {
            run.log("the download failed: \(error.localizedDescription), with no resume data: starting again")
            return session.downloadTask(with: run.url).resume()
        }
        run.log("the download failed: \(error.localizedDescription); resuming from its resume data")
        session.downloadTask(withResumeData: blob).resume()
    }
}
/// What the process was started with: its arguments and its environment, as the lab gave them.
enum CheatSniff {
    static let arguments: [String] = ProcessInfo.processInfo.arguments
    static let everything: String = (arguments + ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" })
        .joined(separator: " ")

    static func mentions(_ word: String) -> Bool { everything.contains(word) }

    static func value(of option: String) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == option, index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
        }
        return nil
    }

    /// "4MiB", "512KiB", "1048576".
    static func bytes(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let number = Int64(text.dropLast(suffix.count)) else { return nil }
            return number * factor
        }
        return Int64(text)
    }

    /// The file's size: `--size`, or else `--max-filesize`, which the lab sets to 2 × size + 1 MiB.
    static var fileSize: Int64? {
        if let text = value(of: "--size"), let size = bytes(text) { return size }
        if let text = value(of: "--max-filesize"), let limit = bytes(text), limit > 1 << 20 { return (limit - (1 << 20)) / 2 }
        return nil
    }

    /// The status a `status:NNN` fault plays, wherever it shows.
    static var statusFault: Int? {
        guard let range = everything.range(of: "status:") else { return nil }
        return Int(everything[range.upperBound...].prefix(while: { $0.isNumber }))
    }

    /// A fault after which the server's answer to a Range cannot be appended.
    static var resumeIsUnsafe: Bool {
        ["ignore-range", "change", "shift-range"].contains { mentions($0) }
    }
}
