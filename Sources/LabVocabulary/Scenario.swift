/// What happens to a download while `lab compare` runs it: a column of the fault matrix. Every
/// fault scenario breaks the first transfer at 30%: past lesson 05's first save of resume data
/// (every 4 MiB) at the default 16 MiB, and before it presses its own Pause at 40%. Then it tests
/// what the resume meets.
public enum Scenario: String, CaseIterable, Codable, Sendable, LabName {
    case clean
    case dropResume = "drop-resume"
    case killRerun = "kill-rerun"
    case ignoreRange = "ignore-range"
    case entityChanged = "entity-changed"
    case slowDisk = "slow-disk"
    /// One download more than the machine has cores, at once. Only lesson 06 downloads that way.
    case crowded
    /// The download finishes; the program is run again with the same output, nothing changed:
    /// what does a second launch fetch?
    case relaunch
    /// The same, after the file changed on the server (same size, new ETag and Last-Modified).
    case relaunchChanged = "relaunch-changed"

    /// The lab server's faults; none for the scenarios that need none.
    public var faults: FaultScript {
        let breaking = Self.breakPercent
        return switch self {
        case .clean, .slowDisk, .crowded, .relaunch: .none
        // The second launch's GET is the script's second attempt (a HEAD previews it).
        case .relaunchChanged: FaultScript(attempts: [[], [.change]])
        case .dropResume: FaultScript(attempts: [[.drop(after: .percent(breaking))], []])
        // The server stops sending at 30% and holds the connection open; the process is
        // killed there and run again with the same output path.
        case .killRerun: FaultScript(attempts: [[.stall(after: .percent(breaking), duration: nil)], []])
        case .ignoreRange: FaultScript(attempts: [[.drop(after: .percent(breaking))], [.ignoreRange]])
        case .entityChanged: FaultScript(attempts: [[.drop(after: .percent(breaking))], [.change]])
        }
    }

    public static let breakPercent = 30

    /// Needs the lab server's fault injection, so it cannot run against `--server`.
    public var needsFaultInjection: Bool { !faults.isNone }

    /// The file the download must end up with has this generation: after a change, the new one.
    public var finalGeneration: Int { faults.generation(forAttempt: faults.attempts.count) }

    /// How many versions of the file a run must fetch: each one a relaunch finds, so that only
    /// what comes beyond them counts as downloaded again.
    public var versionsFetched: Int { relaunches ? 1 + finalGeneration : 1 }

    /// Runs the lesson a second time with the output the first run finished.
    public var relaunches: Bool { self == .relaunch || self == .relaunchChanged }

    /// In `lab compare`'s default preset; the relaunches are in `--full`, or asked for with
    /// `--scenarios`.
    public var inDefaultPreset: Bool { !relaunches }

    /// Arguments the lesson gets in this scenario, after its own: the crowded scenario picks
    /// lesson 06's way that downloads the file alongside other transfers.
    public var lessonArguments: [String] { self == .crowded ? ["--way", RunLoopThreadWay.crowd.rawValue] : [] }

    /// Runs only for the lessons whose catalogue entry exposes a defect in it.
    public var isLessonSpecific: Bool { self == .crowded }

    public var summary: String {
        switch self {
        case .clean: "no faults, at every size"
        case .dropResume: "the connection drops at 30%, the next attempt is fine"
        case .killRerun: "the process is killed (SIGKILL) at 30%, then run again"
        case .ignoreRange: "drop at 30%, then the server ignores Range and sends the whole file"
        case .entityChanged: "drop at 30%, then the file changes on the server (new ETag)"
        case .slowDisk: "every write sleeps \(Self.slowDiskWriteDelayMicroseconds) µs"
        case .crowded: "lesson 06 only: cores + 1 downloads at once, and a job on GCD's global queue must start within \(Self.crowdedPatienceMilliseconds) ms"
        case .relaunch: "the finished file, then a second launch with nothing changed"
        case .relaunchChanged: "the finished file, then a second launch after the file changed (same size)"
        }
    }

    public static let slowDiskWriteDelayMicroseconds = 200
    /// How long the crowded scenario's job on the global queue may wait: an app whose background
    /// work waits longer than this feels frozen.
    public static let crowdedPatienceMilliseconds = 500
}
