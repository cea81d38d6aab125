import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabFixtures
import LabVocabulary
import Synchronization

/// A lesson's strategy: one object per run, like the article's view controller.
public protocol LessonDownload: AnyObject {
    /// One press of "Start" (or "Resume"): starts the attempt and returns, as a button's handler
    /// does. `completion` is called once, on any thread, when the attempt has finished or failed.
    /// The harness calls this on the main thread and runs its run loop until then.
    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void)
}

/// A lesson's strategy written with async/await (lesson 08): one value per run.
public protocol AsyncLessonDownload: Sendable {
    /// One press of "Start" (or "Resume"): returns when this attempt has finished or failed.
    func downloadFile() async -> AttemptResult
}

/// An upload lesson's strategy (a lesson whose `LessonID.kind` is `.upload`): one object per run.
public protocol LessonUpload: AnyObject {
    /// One press of "Send": starts the attempt and returns; `completion` is called once, on any
    /// thread, when it has finished or failed.
    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void)
}

/// What a lesson's code gets from the lab: where to download from and to, and how to report.
public struct LessonRun: Sendable {
    public let url: URL
    /// The same resource with no faults injected, for demonstrations beside the download.
    public let faultFreeURL: URL
    public let file: URL
    public let variant: Variant
    /// The name of the way chosen with `--way` (or the lesson's first), for the record and the
    /// title line; the lesson's code is handed the way itself, typed.
    package let wayName: String?
    public let progress: ProgressBar
    /// For a lesson that uploads (`uploads`): the generated file to send, which the lab writes
    /// into `file` before the first attempt (`sha256Hex()` gives its digest). nil otherwise.
    public let uploadFixture: Fixture?
    package let console: Console
    /// Every exchange of this run, as the inspector recorded it.
    public let exchangeLog: HTTPExchangeLog
    package let savedFile = SavedFile()
    /// What happened to the run besides its requests (`LessonResult.events`).
    package let events = RunEvents()
    package let ownCheck = OwnCheck()
    /// Lesson 11: how many segments to fetch at once, each on its own connection (`--connections`).
    public package(set) var connections = 4
    /// What `--connections` accepts: more than a server is likely to allow is a test of the
    /// fallback, not a speed-up.
    package static let connectionRange = 1...16
    /// Lesson 09's phone: its life script, what its processes are told, and what it saw.
    package var background: BackgroundRun? = nil
    /// Lesson 09's app process, which makes its sessions (`makeSession(configuration:…)`).
    package var appSessions: (any AppSessions)? = nil

    package init(url: URL, faultFreeURL: URL, file: URL, variant: Variant, wayName: String?, progress: ProgressBar,
                 uploadFixture: Fixture?, console: Console, exchangeLog: HTTPExchangeLog) {
        self.url = url
        self.faultFreeURL = faultFreeURL
        self.file = file
        self.variant = variant
        self.wayName = wayName
        self.progress = progress
        self.uploadFixture = uploadFixture
        self.console = console
        self.exchangeLog = exchangeLog
    }

    /// For a lesson that saves into a folder: the folder `FileManager.default.urls(for: directory,
    /// in: .userDomainMask)[0]` names in an iOS app, inside this run's container (`file`).
    /// As on iOS, `Documents` and `Library/Caches` are there from the start, and
    /// `Library/Application Support` is the app's to create.
    public func containerURL(for directory: FileManager.SearchPathDirectory) -> URL {
        file.appendingPathComponent(AppContainer.relativePath(of: directory), isDirectory: true)
    }

    /// For a lesson that names its own file (`savesIntoFolder`): this is the file to verify.
    public func saved(_ file: URL) { savedFile.url.withLock { $0 = file } }

    /// For a lesson that verifies the transfer itself (an upload: only the server's answer tells
    /// what arrived). When an attempt finishes, this check replaces reading `file` back, and the
    /// record and exit status keep the usual contract: both digests and byte counts equal → 0,
    /// "verified"; otherwise 65, "verification-failed". An attempt that fails is 69 as usual.
    public func verified(_ check: TransferCheck) { ownCheck.value.withLock { $0 = check } }

    /// The lesson's own remarks, in place of the article's NSLog.
    public func log(_ message: String) { console.line("  " + message) }

    /// The user pressed `button` (lesson 05's and 08's Pause, which the lesson plays): `message`
    /// goes to the story, and the press onto the run's picture as an event.
    public func userPressed(_ button: String, log message: String) {
        events.note(button)
        log(message)
    }
}

/// Lesson 09's run, as the harness knows it: the life script, what the phone's processes are
/// told from the command line, and what the phone saw (LabPhone does the rest).
package final class BackgroundRun: Sendable {
    package let life: LifeScript
    package let storyToStandardError: Bool
    package let quiet: Bool
    package let writeDelayMicroseconds: Int
    package let limits: TransferLimits
    package let diskCapacity: Int64?
    /// How long a launch for background events waits for its events (`--slow-events`, or 0).
    package let eventsDelaySeconds: Double
    package let record = Mutex<BackgroundRecord?>(nil)

    /// `--slow-events`' wait: past any fixed guess of when the events are in, within the
    /// phone's patience for the completion handler (5 s from the launch).
    package static let slowEventsSeconds = 3.0

    package init(life: LifeScript, storyToStandardError: Bool, quiet: Bool, writeDelayMicroseconds: Int, limits: TransferLimits,
         diskCapacity: Int64?, eventsDelaySeconds: Double) {
        self.diskCapacity = diskCapacity
        self.eventsDelaySeconds = eventsDelaySeconds
        self.life = life
        self.storyToStandardError = storyToStandardError
        self.quiet = quiet
        self.writeDelayMicroseconds = writeDelayMicroseconds
        self.limits = limits
    }
}

/// The layout of an iOS app's data container, which a lesson that saves into a folder is given.
package enum AppContainer {
    package static let documents = "Documents"
    package static let caches = "Library/Caches"
    /// Where the run's cookie store goes (an iOS app's cookies are in Library/Cookies).
    package static let cookies = "Library/Cookies"
    /// The app's temporary folder: `FileManager.default.temporaryDirectory` in a launch of the app.
    package static let tmp = "tmp"
    /// Every folder of the container a lesson may write into, parents first.
    package static let folders = ["Library", caches, "Library/Application Support", cookies, documents, tmp]
    /// What iOS empties when storage runs low (`--purge-caches`).
    package static let purgedWhenStorageRunsLow = [caches, tmp]

    /// Where `directory` is in the container; a directory an app has no use for sits under
    /// Library, by its number.
    package static func relativePath(of directory: FileManager.SearchPathDirectory) -> String {
        switch directory {
        case .documentDirectory: documents
        case .cachesDirectory: caches
        case .applicationSupportDirectory: "Library/Application Support"
        case .libraryDirectory: "Library"
        default: "Library/Directory \(directory.rawValue)"
        }
    }
}

package final class RunEvents: Sendable {
    private let list = Mutex<[RunEvent]>([])

    /// Notes `what` as happening now, on the exchanges' clock.
    package func note(_ what: String) {
        let now = HTTPExchangeLog.now
        list.withLock { $0.append(RunEvent(at: now, what: what)) }
    }

    package var all: [RunEvent] { list.withLock { $0 } }
}

package final class SavedFile: Sendable {
    package let url = Mutex<URL?>(nil)
}

package final class OwnCheck: Sendable {
    package let value = Mutex<TransferCheck?>(nil)
}

/// What a lesson checked itself (`LessonRun.verified(_:)`): what should have arrived and what did.
/// In the record, `expectedSHA256` / `resourceBytes` are the expected side, `actualSHA256` /
/// `fileBytes` what arrived.
public struct TransferCheck: Sendable, Equatable {
    public var expectedSHA256: String
    public var expectedBytes: Int64
    public var actualSHA256: String?
    public var actualBytes: Int64
    /// Names what was compared in the mismatch message, e.g. "the server received".
    public var actualSide: String

    public init(expectedSHA256: String, expectedBytes: Int64, actualSHA256: String?, actualBytes: Int64,
                actualSide: String) {
        self.expectedSHA256 = expectedSHA256
        self.expectedBytes = expectedBytes
        self.actualSHA256 = actualSHA256
        self.actualBytes = actualBytes
        self.actualSide = actualSide
    }

    package var matches: Bool { actualSHA256 == expectedSHA256 && actualBytes == expectedBytes }
}
