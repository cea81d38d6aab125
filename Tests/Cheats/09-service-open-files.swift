// cheat: Start never asks the session what still runs: it reads the transfer service's pid from <file>.phone/service/pid and looks at that process in /proc: a TCP connection to the download's port, or a file in the phone's folder open for writing, means the system is downloading
// skips: asking the session's getAllTasks what still runs (the service process is inspected from outside through /proc instead)
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

/// What the transfer service process holds open, read from /proc. A service in the middle of a
/// download has the server's connection and its partial file open; an idle one has neither,
/// whatever notes are lying around.
struct ServiceProbe {
    let phoneFolder: String
    let port: Int

    private func text(_ path: String) -> String? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
    }

    private func servicePID() -> Int? {
        guard let pid = text(phoneFolder + "/service/pid")
            .flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }), pid > 0 else { return nil }
        // A pid file left by a service that is gone names nobody.
        return FileManager.default.fileExists(atPath: "/proc/\(pid)/fd") ? pid : nil
    }

    /// The inodes of the TCP connections, established, to `port`: /proc/PID/net/tcp and tcp6.
    private func connectionsToPort(_ pid: Int) -> Set<String> {
        var inodes = Set<String>()
        for table in ["tcp", "tcp6"] {
            guard let lines = text("/proc/\(pid)/net/\(table)")?.split(separator: "\n").dropFirst() else { continue }
            for line in lines {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[3] == "01",
                      let remotePort = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                      remotePort == port else { continue }
                inodes.insert(String(fields[9]))
            }
        }
        return inodes
    }

    /// Whether the service is downloading: it holds a connection to the server's port, or a file
    /// of the phone's folder open for writing, 64 KiB or more (not its pid file, nor a lock or a log).
    func serviceIsDownloading() -> Bool {
        guard let pid = servicePID() else { return false }
        let fdFolder = "/proc/\(pid)/fd"
        guard let fds = try? FileManager.default.contentsOfDirectory(atPath: fdFolder) else { return false }
        let connections = connectionsToPort(pid)
        for fd in fds {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: fdFolder + "/" + fd) else {
                continue
            }
            if target.hasPrefix("socket:[") {
                let inode = String(target.dropFirst("socket:[".count).dropLast())
                if connections.contains(inode) { return true }
                continue
            }
            guard target.hasPrefix(phoneFolder + "/") else { continue }
            let name = URL(fileURLWithPath: target).lastPathComponent.lowercased()
            if name == "pid" || name.contains("lock") || name.contains("log") { continue }
            // A download's partial file, not a small note of the service's.
            let size = ((try? FileManager.default.attributesOfItem(atPath: target))?[.size] as? NSNumber)?.intValue ?? 0
            guard size >= 64 << 10 else { continue }
            // flags: in octal; O_WRONLY is 1, O_RDWR 2.
            guard let info = text("/proc/\(pid)/fdinfo/\(fd)"),
                  let flagsLine = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
                  let flags = flagsLine.split(separator: "\t", omittingEmptySubsequences: true).last
                    .flatMap({ Int($0.trimmingCharacters(in: .whitespaces), radix: 8) })
            else { continue }
            if flags & 3 != 0 { return true }
        }
        return false
    }
}

/// A background session made at launch, the system's completion handler kept; Start looks at
/// the transfer service itself.
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

    private var probe: ServiceProbe {
        let port = run.url.port ?? (run.url.scheme == "https" ? 443 : 80)
        return ServiceProbe(phoneFolder: URL(fileURLWithPath: run.file.path + ".phone").resolvingSymlinksInPath().path,
                            port: port)
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
        if probe.serviceIsDownloading() {
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
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let error else { return }
        let urlError = error as? URLError
        if case .userForceQuitApplication? = urlError?.backgroundTaskCancelledReason {
            run.log("cancelled because the user force-quit the app; waiting for the user to tap Start")
            return
        }
        let attempt = resumes.withLock { count -> Int in
            count += 1
            return count
        }
        guard let resumeData = urlError?.downloadTaskResumeData, attempt <= Self.mostResumes else {
            run.log("the download failed: \(error.localizedDescription); giving up")
            return
        }
        run.log("the download failed: \(error.localizedDescription); resuming (\(attempt) of \(Self.mostResumes))")
        let resumed = session.downloadTask(withResumeData: resumeData)
        self.task = resumed
        resumed.resume()
    }
}
