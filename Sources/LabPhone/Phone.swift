import Foundation
import LabKit
import LabPlatform
import LabVocabulary
import Synchronization

// Lesson 09 runs as three processes, each a role of the same executable:
// - the phone (the lesson as it was started): the system. It launches the app, suspends and ends
//   it as `--life` says, restarts the transfer service if it dies (as launchd restarts
//   nsurlsessiond), and relaunches the app when the service has events for it;
// - the transfer service: nsurlsessiond's stand-in. It runs the background sessions' transfers
//   and keeps their state on disk;
// - the app: the lesson's code, with its sessions.
// They share the phone's folder, next to the downloaded file, and talk through files in it: each
// file is written whole under a temporary name and renamed, so a kill at any moment leaves either
// the old file or the new one.

/// The phone's folder, `<file>.phone/`, and what is in it.
struct PhoneFolder: Sendable {
    let root: URL

    init(forDownloadTo file: URL) {
        root = file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".phone", isDirectory: true)
    }

    init(root: URL) { self.root = root }

    /// The service's own: one record (`<id>.json`), partial file (`<id>.part`) and finished file
    /// (`<id>.download`) per task.
    var tasks: URL { root.appendingPathComponent("service/tasks", isDirectory: true) }
    /// The apps' requests to the service, one file each, removed once carried out.
    var requests: URL { root.appendingPathComponent("service/requests", isDirectory: true) }
    /// The service's process id, for whoever wants to end it.
    var servicePID: URL { root.appendingPathComponent("service/pid") }
    /// The app's temporary folder: where `didFinishDownloadingTo` finds its file.
    var appTemporary: URL { root.appendingPathComponent("app/tmp", isDirectory: true) }
    /// What the app's process tells the phone: its progress, its completion handler.
    var appReports: URL { root.appendingPathComponent("app/reports", isDirectory: true) }
    /// The life script's points: `reached-N` from whoever transfers, `released-N` from the phone.
    var life: URL { root.appendingPathComponent("life", isDirectory: true) }

    func record(_ id: String) -> URL { tasks.appendingPathComponent(id + ".json") }
    func partialFile(_ id: String) -> URL { tasks.appendingPathComponent(id + ".part") }
    func finishedFile(_ id: String) -> URL { tasks.appendingPathComponent(id + ".download") }
    /// The body of the server's answer to an upload task.
    func answerFile(_ id: String) -> URL { tasks.appendingPathComponent(id + ".answer") }

    /// Makes the folders that are missing. Each one, from the root down, must be a folder of its
    /// own: a link planted in its place (to another user's files, say) is refused, so nothing is
    /// written or deleted through it.
    func make() throws {
        try claimRoot()
        let parts = [root, root.appendingPathComponent("service"), tasks, requests,
                     root.appendingPathComponent("app"), appTemporary, appReports, life]
        for folder in parts {
            if mkdir(folder.path, 0o700) != 0, errno != EEXIST {
                throw DownloadError.localIO(path: folder.path, reason: "cannot create the phone's folder: \(String(cString: strerror(errno)))")
            }
            var facts = stat()
            guard lstat(folder.path, &facts) == 0, facts.st_mode & S_IFMT == S_IFDIR else {
                throw DownloadError.localIO(path: folder.path, reason: "the phone's folder is not a folder (a link, or a file): it is left alone")
            }
        }
    }

    /// Takes the folder for this run: one phone at a time (`flock`), so a second run on the same
    /// file is refused at once, and a run that is killed lets go with its process. The descriptor
    /// is kept open for as long as the run goes on.
    func takeForThisRun() throws -> Int32 {
        let file = root.appendingPathComponent("lock")
        while true {
            let descriptor = open(file.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw DownloadError.localIO(path: file.path, reason: "cannot lock the phone's folder: \(String(cString: strerror(errno)))")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                close(descriptor)
                throw DownloadError.localIO(path: root.path, reason: "another run is downloading to the same file: its phone's folder is in use")
            }
            // A run that ended between the open and the lock may have removed the folder, and a
            // third one made it anew: the lock counts only on the file that is there now.
            var held = stat(), there = stat()
            if fstat(descriptor, &held) == 0, lstat(file.path, &there) == 0, held.st_ino == there.st_ino, held.st_dev == there.st_dev {
                return descriptor
            }
            close(descriptor)
            try make()
        }
    }

    /// The lab's mark in a phone folder it made: a folder of that name without it is not the
    /// lab's (it is refused, and so never emptied or removed).
    var mark: URL { root.appendingPathComponent(".download-lab-phone") }

    /// Makes the root with its mark, or checks an existing one: empty (a kill came between the
    /// folder and its mark) or marked.
    private func claimRoot() throws {
        if mkdir(root.path, 0o700) != 0, errno != EEXIST {
            throw DownloadError.localIO(path: root.path, reason: "cannot create the phone's folder: \(String(cString: strerror(errno)))")
        }
        var facts = stat()
        guard lstat(root.path, &facts) == 0, facts.st_mode & S_IFMT == S_IFDIR else {
            throw DownloadError.localIO(path: root.path, reason: "the phone's folder is not a folder (a link, or a file): it is left alone")
        }
        if OutputFile.isRegularFile(mark) { return }
        guard ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? ["?"]).isEmpty else {
            throw DownloadError.localIO(path: root.path, reason: "a folder of this name is there and is not the lab's: it is left alone")
        }
        guard FileManager.default.createFile(atPath: mark.path, contents: nil) else {
            throw DownloadError.localIO(path: mark.path, reason: "cannot mark the phone's folder")
        }
    }

    /// A task's id names its files, so it must be one the phone's session would make: a UUID.
    /// An id from a planted file (`../../x`) names no file at all.
    static func isTaskID(_ id: String) -> Bool {
        UUID(uuidString: id)?.uuidString == id
    }

    /// Every task record the service keeps, oldest first.
    func records() -> [TransferRecord] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: tasks.path)) ?? []
        return names.filter { $0.hasSuffix(".json") }.compactMap { name in
            // A record is the file of its own id, and nothing else.
            guard let record = TransferRecord.read(from: tasks.appendingPathComponent(name)),
                  Self.isTaskID(record.id), name == record.id + ".json" else { return nil }
            return record
        }.sorted { $0.number < $1.number }
    }

    /// The records of the lesson's app's tasks: every app's but another app's (`OtherApp`).
    func appRecords() -> [TransferRecord] { records().filter { !OtherApp.owns($0) } }

    /// Removes a delivered task: its record first, so a kill in between leaves a stray file the
    /// service sweeps, never a record without its file.
    func forget(_ id: String) {
        try? FileManager.default.removeItem(at: record(id))
        try? FileManager.default.removeItem(at: finishedFile(id))
        try? FileManager.default.removeItem(at: partialFile(id))
        try? FileManager.default.removeItem(at: answerFile(id))
        ResumeState.remove(for: partialFile(id))
    }
}

/// Each child process's peak resident memory, written as it goes: `peak-rss-<role>-<pid>.json`.
func reportPeakMemory(role: String, in phone: PhoneFolder) {
    try? writeWhole(Platform.peakResidentBytes(), to: phone.root.appendingPathComponent("peak-rss-\(role)-\(getpid()).json"))
}

/// Writes `value` as JSON to `url` whole: under a temporary name, then renamed over it.
func writeWhole<Value: Encodable>(_ value: Value, to url: URL) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    try encoder.encode(value).write(to: url, options: .atomic)
}

func readWhole<Value: Decodable>(_ type: Value.Type, from url: URL) -> Value? {
    guard let data = OutputFile.readBounded(url) else { return nil }
    return try? JSONDecoder().decode(type, from: data)
}

/// One background task, as the service keeps it. The service alone writes it, until the task has
/// ended; then the app's session delivers its events and removes it.
struct TransferRecord: Codable, Sendable, Equatable {
    enum State: String, Codable, Sendable {
        /// Created while the app ran in the background: waits for the rate limiter's delay.
        case waiting
        case running
        /// Whole, in `<id>.download`: `didFinishDownloadingTo` is due, then `didCompleteWithError`.
        case downloaded
        /// An upload the server answered, its answer's body in `<id>.answer`: `didReceive` with
        /// that body is due, then `didCompleteWithError`.
        case uploaded
        case failed
        case cancelled

        var hasEnded: Bool { self == .downloaded || self == .uploaded || self == .failed || self == .cancelled }
    }

    /// What an upload task sends: the app's file, with its request's method and header fields.
    struct Upload: Codable, Sendable, Equatable {
        /// The absolute path of the file, which the service reads where the app keeps it.
        var file: String
        var method: String
        var headers: [String: String]
    }

    enum Failure: String, Codable, Sendable {
        /// The server or the network: the bytes so far are worth resuming, with resume data.
        case network
        /// The disk refused a write or a rename: trying again refuses again.
        case disk
        /// A response passed `--max-filesize`.
        case limit
    }

    var id: String
    /// The task's `taskIdentifier`, unique within the session.
    var number: Int
    /// The session's identifier.
    var session: String
    var url: String
    var state: State
    /// The total from the response, once there is one; -1 while unknown.
    var expected: Int64 = -1
    var status: Int?
    var responseURL: String?
    var responseHeaders: [String: String]?
    /// Why the task failed or was cancelled, as the error's code and sentence.
    var errorCode: Int?
    var errorMessage: String?
    /// Whose failure it was, for a task that failed.
    var failure: Failure?
    /// `NSURLErrorBackgroundTaskCancelledReasonKey`, for a task the system cancelled.
    var cancelledReason: Int?
    /// Cancelled with `cancel(byProducingResumeData:)`: the partial file stays for the resume
    /// data, as a failed task's does.
    var keptForResume: Bool?
    /// An upload task's body; nil for a download task.
    var upload: Upload?
    /// An upload's bytes sent so far, and the whole body's length.
    var sent: Int64?
    var toSend: Int64?
    /// The rate limiter: a task created in the background starts no earlier than this.
    var notBefore: Date?
    /// A task made from resume data continues this task's partial file, which it takes over
    /// (again, after a crash in between).
    var continues: String?

    static func read(from url: URL) -> TransferRecord? { readWhole(TransferRecord.self, from: url) }
}

/// What an app's session asks of the service: one file in `requests/`.
struct ServiceRequest: Codable, Sendable {
    enum Kind: String, Codable, Sendable {
        /// A new task (`task` holds it), or one that continues from resume data (`resumeFrom`).
        case create
        /// `cancel()` of one task.
        case cancel
        /// `cancel(byProducingResumeData:)` of one task: it stops, and its partial file stays.
        case cancelByProducingResumeData = "cancel-by-producing-resume-data"
        /// The user force-quit the app: every task of the app is cancelled, and none relaunches it.
        case forceQuit = "force-quit"
    }

    var kind: Kind
    var task: TransferRecord?
    /// The task whose partial file a resumed task continues.
    var resumeFrom: String?
    var taskID: String?
    /// The app was running in the background when it made the task: the rate limiter applies.
    var inBackground = false
    /// The launch that made it began with a tap on Start.
    var askedByUser = false

    /// Queued under a name that sorts in the order the requests were made; the file is returned,
    /// which the service removes once it has carried the request out.
    @discardableResult
    func send(to phone: PhoneFolder) throws -> URL {
        let name = String(format: "%.6f-%@.json", Date().timeIntervalSince1970, UUID().uuidString)
        let file = phone.requests.appendingPathComponent(name)
        try writeWhole(self, to: file)
        return file
    }
}

/// The points of the life script that a transfer stops at until the phone has played them.
/// Whoever transfers calls `pass(received:of:)` after each write: the service for a background
/// session, the app itself for any other.
final class LifePoints: @unchecked Sendable {
    // @unchecked: used by one transfer at a time (its delegate queue, or the service's attempt
    // thread); the files are the shared state.
    private let folder: URL
    private var pending: [Int]

    init(_ phone: PhoneFolder) {
        folder = phone.life
        pending = (readWhole([Int].self, from: phone.life.appendingPathComponent("points.json")) ?? []).sorted()
    }

    /// Called before a transfer waits at a point: the phone may end the process there, and what
    /// the process recorded so far must be on disk first.
    static let beforeWaiting = Mutex<(@Sendable () -> Void)?>(nil)

    static func write(_ points: [Int], to phone: PhoneFolder) throws {
        try writeWhole(points, to: phone.life.appendingPathComponent("points.json"))
    }

    static func reached(_ point: Int, in phone: PhoneFolder) -> Bool {
        FileManager.default.fileExists(atPath: phone.life.appendingPathComponent("reached-\(point)").path)
    }

    static func release(_ point: Int, in phone: PhoneFolder) {
        _ = FileManager.default.createFile(atPath: phone.life.appendingPathComponent("released-\(point)").path, contents: nil)
    }

    /// Stops here while a point at or below this share of the file waits for the phone.
    func pass(received: Int64, of total: Int64) {
        guard total > 0 else { return }
        // In Double: a server's total may be near Int64.max, where the product would overflow.
        while let point = pending.first, Double(received) * 100 >= Double(point) * Double(total) {
            let released = folder.appendingPathComponent("released-\(point)").path
            if !FileManager.default.fileExists(atPath: released) {
                Self.beforeWaiting.withLock { $0 }?()
                _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("reached-\(point)").path, contents: nil)
                // The phone plays the event (it may end this very process) and then releases it.
                while !FileManager.default.fileExists(atPath: released), PhoneRole.phoneIsAlive { usleep(2_000) }
            }
            pending.removeFirst()
        }
    }
}

/// What a child of the phone is: it finds its role, and what it is told, in its environment.
enum PhoneRole: String, Sendable {
    case app
    case service

    static let variable = "DOWNLOAD_LAB_PHONE_ROLE"
    static let settingsVariable = "DOWNLOAD_LAB_PHONE_SETTINGS"

    /// The phone that started this process, from its settings (set first thing in a child).
    nonisolated(unsafe) static var phone: Int32 = 0
    static var phoneIsAlive: Bool { getppid() == phone }
}

/// What the phone tells the service and the app when it starts them.
struct PhoneSettings: Codable, Sendable {
    var phone: String
    /// The phone's process id: once a child's parent is another, the phone is gone.
    var phoneProcess: Int32 = getpid()
    var storyToStandardError: Bool
    var quiet: Bool
    var writeDelayMicroseconds: Int
    var idleSeconds: Double
    /// `--max-filesize`: the most one response may announce or bring.
    var maxFileSize: Int64?
    /// `--disk-full-after`: what the service's simulated disk takes.
    var diskCapacity: Int64?
    /// A launch for background events gets its events this long after it starts.
    var eventsDelaySeconds: Double
    // The app's:
    var url: String?
    var file: String?
    var variant: Variant?
    /// The sessions whose events the app is launched for; empty for a launch by the user.
    var backgroundEventsFor: [String] = []
    /// The user presses Start once the app has launched.
    var pressStart = false
    /// Launched by the system in the background (the rate limiter applies to its new tasks).
    var inBackground = false

    var folder: PhoneFolder { PhoneFolder(root: URL(fileURLWithPath: phone)) }

    static func fromEnvironment() -> PhoneSettings? {
        guard let text = ProcessInfo.processInfo.environment[PhoneRole.settingsVariable] else { return nil }
        return try? JSONDecoder().decode(PhoneSettings.self, from: Data(text.utf8))
    }

    /// The limits a child applies to its own transfers (`--max-time` is the phone's to keep).
    var limits: TransferLimits { TransferLimits(maxSeconds: nil, maxFileSize: maxFileSize, idleSeconds: idleSeconds) }

    func environment(role: PhoneRole) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment[PhoneRole.variable] = role.rawValue
        // A child that crashes says so in one line through the phone, not in a backtrace.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        environment[PhoneRole.settingsVariable] = String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self)
        return environment
    }
}
