/// One defect of an article's code, as one lesson's `article` variant keeps it: what it is, where
/// it comes from, the run that exposes it, what that run looks like while the defect is there,
/// and hints for fixing it. `lab compare`, `lab exercise` and the tests all read these.
import LabVocabulary
public struct Defect: Sendable {
    /// Short and stable, e.g. "range-colon": the check's name, and the first column of the
    /// lesson page's "Where it breaks" table.
    public let id: String
    /// One line: what is wrong.
    public let summary: String
    public let source: ArticleSection
    /// The run that exposes it, on a small file.
    public let trial: Trial
    /// What that run looks like while the defect is there.
    public let symptom: Symptom
    /// What the run must do once the defect is fixed.
    public let fix: Fix
    /// The fault-matrix columns of `lab compare` where the article variant fails because of it.
    public let matrix: [Scenario]
    /// From the symptom a run shows, to its cause, to the fix.
    public let hints: [String]
    /// Why the defect shows only on Linux, where it was measured; nil when it shows everywhere.
    /// On other systems the checks and `lab compare` leave it out.
    public var linuxOnly: String? = nil
    /// What shows that a failed run failed by this defect and not by another that looks alike;
    /// nil where the symptom says it alone.
    public var cause: Cause? = nil
}

/// An article, by title, and the part of it the defect is in.
public struct ArticleSection: Sendable {
    public let title: String
    public let section: String

    public var cited: String { "\"\(title)\", \(section)" }
}

/// How a check runs the program: one run, or two with the same output path.
public struct Trial: Sendable {
    /// The lab server's faults (`lab serve` lists the syntax); "" for none.
    public var faults: FaultScript
    public var size: Int64
    /// More arguments for the program, e.g. `--disk-full-after 1MiB`. Only the first run gets them.
    public var arguments: [String] = []
    /// Arguments every run gets, e.g. the `--way` that is the download itself.
    public var everyRun: [String] = []
    public var sequel: Sequel = .none
    /// The generation of the file the last run must end with: 1 once the script has a `change`.
    public var generation = 0

    public init(faults: FaultScript, size: Int64, arguments: [String] = [], everyRun: [String] = [], sequel: Sequel = .none,
                generation: Int = 0) {
        self.faults = faults
        self.size = size
        self.arguments = arguments
        self.everyRun = everyRun
        self.sequel = sequel
        self.generation = generation
    }

    public enum Sequel: String, Sendable {
        case none
        /// The program runs again, with the same URL and output, without `arguments`.
        case rerun
        /// The program is killed (SIGKILL) once the server has stalled at its break, then run
        /// again as with `rerun`.
        case killAndRerun = "kill-and-rerun"
        /// As `killAndRerun`, but the rerun fetches the same file from another URL, as an app does
        /// from an embedded server, which listens on a new port every run. The first URL still
        /// answers, with its file changed: the old port taken by another server.
        case killAndRerunAtAnotherURL = "kill-and-rerun-at-another-url"
        /// As `killAndRerun`, but the rerun is a new install: the same URL and another output
        /// folder, with the same TMPDIR (on a Mac a command-line program's TMPDIR is the user's,
        /// shared by all). What the first install kept with its output is not there; what it kept
        /// elsewhere on the machine is.
        case killAndRerunAsANewInstall = "kill-and-rerun-as-a-new-install"

        /// The program runs twice.
        public var runsTwice: Bool { self != .none }
        public var kills: Bool { self == .killAndRerun || self == .killAndRerunAtAnotherURL || self == .killAndRerunAsANewInstall }
    }

    /// The command a student types to see a one-run trial, less `--output` and the server.
    public func commandLine(executable: String) -> String {
        "swift run \(executable) " + ShellWord.line(["--size", ByteSize.format(size), "--faults", faults.isNone ? "" : faults.description]
                                                     + everyRun + arguments)
    }
}

/// What a run shows while the defect is there.
public enum Symptom: Sendable, Equatable {
    /// The program says it is done (its own verification then fails, exit 65) and the file is wrong.
    case claimsDone(FileProblem)
    /// The file verifies, but the attempt after the break did not ask for the rest: its GET had
    /// no `Range`, or one that asks again for more than `Symptom.wasteAllowed` of what the broken
    /// transfer had sent.
    case startsOver
    /// The file verifies, but the peak RSS rose by more than this multiple of the file's size
    /// above the clean run's.
    case holdsInMemory(moreThan: Double)
    /// The file verifies, but the program sent HEAD requests.
    case sendsHEAD
    /// The file verifies, but the server sent its bytes more than once (by more than
    /// `Symptom.wasteAllowed`), or answered more than `requestsAllowed` requests: a launch that
    /// had the current file fetched it again, or asked twice.
    case fetchesAgain(requestsAllowed: Int?)
    /// The file verifies, but the server sent more body bytes than the file once, or answered
    /// more than `requestsAllowed` requests: a launch whose file was current got a body, cut
    /// short or not, where a 304 has none.
    case bodyWhenCurrent(requestsAllowed: Int)
    /// The file verifies, but under a name other than the resource's.
    case misnamesTheFile
    /// The server received the uploaded file this many bytes longer (the program exits 65).
    case uploadArrivesLonger(by: Int64)
    /// A job sent to GCD's global queue waited past the scenario's patience (the run fails).
    case starvesTheGlobalQueue
    /// A progress report went past 100%, or was reckoned against a total that is not the file's
    /// size, or none came at all; or, where a response of the trial announces the total
    /// (`totalAnnounced`), no report gave it.
    case misreportsProgress(totalAnnounced: Bool)
    /// The attempt after the break did not continue the file: the file came out wrong, or the
    /// next request asked for no Range, or its answer was the whole file again (not a 206).
    case doesNotResume
    /// Lesson 09: the run's record shows a rule of background sessions broken, or no background
    /// session used at all (then every rule is).
    case breaksBackgroundRule(BackgroundRule)
    /// Lesson 11: the file verifies, but not as `ranges` ranges side by side: the server never
    /// sent bodies to `ranges - 1` GETs at once, or one answer carried more than one and a half
    /// ranges' share of the file.
    case notSideBySide(ranges: Int)
    /// Lesson 11: a range answered 503 with `Retry-After` was asked for again before that time
    /// had passed, by the server's log.
    case ignoresRetryAfter
    /// More requests than `allowed` in the whole run, whatever their method: a probe before the
    /// answer (a HEAD, a one-byte `Range`) is a round trip too.
    case roundTrips(moreThan: Int)
    /// The rerun, a new install, asked for a `Range`: it resumed from something the first install
    /// kept outside its own folders.
    case resumesAnotherInstall
}

/// Apple's rules for background sessions that lesson 09's checks hold an app to, each seen by the
/// phone from outside the app's code (`BackgroundRecord`).
public enum BackgroundRule: String, Sendable, CaseIterable {
    /// The download goes on while the app is suspended and ended, and the system relaunches the
    /// app with it: the server sends little of it twice.
    case downloadOutlivesTheApp = "download-outlives-the-app"
    /// The file handed to didFinishDownloadingTo is moved before the method returns.
    case fileMovedBeforeReturn = "file-moved-before-return"
    /// Every launch makes the session with the same identifier, so the events that waited for it
    /// are delivered.
    case sessionMadeAtLaunch = "session-made-at-launch"
    /// The completion handler of a launch for events is called, on the main queue, once the
    /// session has delivered the events (`urlSessionDidFinishEvents`), not before.
    case completionHandlerCalled = "completion-handler-called"
    /// After a force-quit, nothing downloads again until the user taps Start.
    case forceQuitNotRetried = "force-quit-not-retried"
    /// One background session per identifier in a launch.
    case oneSessionPerIdentifier = "one-session-per-identifier"
    /// Start, tapped while the download goes on in the background, begins no second one.
    case oneDownloadAtATime = "one-download-at-a-time"
    /// A failure the system has given up on is resumed a few times, not for ever: at most
    /// `tasksForOneStart` download tasks for one tap on Start.
    case resumesWithALimit = "resumes-with-a-limit"

    /// The corrected variant makes 3 (the first and two resumes); this leaves room for more.
    public static let tasksForOneStart = 5
}

extension Symptom {
    /// What a resume may fetch again: the bytes in flight when the transfer broke, not the file.
    public static let wasteAllowed: Int64 = 1 << 20

    /// The check compares the run's peak memory with the clean run's.
    public var measuresMemory: Bool {
        if case .holdsInMemory = self { true } else { false }
    }
}

/// What is wrong with a file a program called complete.
public enum FileProblem: Sendable, Equatable {
    case missing
    case longer(by: Amount)
    case shorter(by: Amount)
    case rightSizeWrongBytes
    /// The server's error page was saved as the file.
    case errorPage
    /// Any file but the right one, of any size: what ranges written over each other leave.
    case scrambled

    public enum Amount: Sendable, Equatable {
        case bytes(Int64)
        /// What the first transfer delivered before the fault script broke it.
        case bytesBeforeTheBreak
        /// Any number of bytes.
        case some
    }
}

/// What a fixed program does in the defect's trial. A stop is part of the contract: the exit
/// status says which failure it was (`ExitStatus`, from LabKit's `DownloadError`).
public enum Fix: Sendable, Equatable {
    /// Ends with the right file, exit 0, and without the symptom.
    case verifies
    /// Either verifies, or stops with this status and leaves nothing, or the start of the right
    /// file, to resume from.
    case verifiesOrStops(ExitStatus)
    /// The first run stops with this status and keeps the start of the file; the rerun verifies.
    case stopsThenRerunVerifies(ExitStatus)
}

/// A check of what the lesson teaches, run whatever the article gets wrong: that a resume
/// happens and wastes nothing, that resume data made for another URL is not trusted. Without
/// them, code that never resumes could pass every defect's check.
public struct Skill: Sendable {
    /// The check's name, e.g. "resumes-after-kill".
    public let id: String
    /// One line: what the program must do.
    public let summary: String
    public let trial: Trial
    /// What a run shows when the program does not do it; nil when any run that verifies does.
    public let symptom: Symptom?
    public let fix: Fix
    /// From the symptom, to the cause, to the fix.
    public let hints: [String]
    /// The ids of the article's defects that make its code fail this check; empty when it passes.
    public let brokenBy: [String]

    /// `brokenBy` names the defects themselves, so a defect that does not exist does not compile.
    init(id: String, summary: String, trial: Trial, symptom: Symptom?, fix: Fix, hints: [String], brokenBy: [Defect]) {
        self.id = id
        self.summary = summary
        self.trial = trial
        self.symptom = symptom
        self.fix = fix
        self.hints = hints
        self.brokenBy = brokenBy.map(\.id)
    }
}
