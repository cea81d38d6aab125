import LabVocabulary
/// What one trial did, seen from outside the program: how it ended, and the bytes it left or sent.
public struct Observation: Sendable {
    public enum Ending: Sendable, Equatable {
        case exited(Int32)
        case signal(Int32)
        case timedOut(seconds: Int)
    }

    public var ending: Ending
    /// The `outcome` of the program's JSON record; nil when it printed none.
    public var outcome: Outcome?
    public var file: FileState
    /// The name of the file the program reported, and the resource's.
    public var fileName: String?
    public var resourceName: String
    public var size: Int64
    /// Where the trial's fault script broke the first transfer.
    public var breakOffset: Int64?
    /// Where the transfer broke, and what the next GET asked for; nil when no GET followed it.
    public var afterTheBreak: AfterTheBreak?
    /// How the first run ended, when the trial has two.
    public var firstEnding: Ending?
    /// Peak RSS above the clean run's, as a multiple of the file's size; nil when not measured.
    public var memoryGrowth: Double?
    public var sentHEAD: Bool
    /// For an upload: the server's file part minus the file sent, in bytes.
    public var uploadExtraBytes: Int64?
    /// What the program's progress reports said, from its record.
    public var progress: ProgressRecord?
    /// Body bytes the server sent for the trial's GETs, over all runs; nil for an upload.
    public var bytesSent: Int64?
    /// The requests the server answered for the trial (GET and HEAD alike), over all runs; nil
    /// for an upload.
    public var requestsSent: Int?
    /// Lesson 09: what the phone saw of the app's life, from the record.
    public var background: BackgroundRecord?
    /// The most GETs the server was sending bodies to at one moment, and the largest body it
    /// sent one GET, over all runs; nil for an upload.
    public var mostAtOnce: Int?
    /// Lesson 11: 503s whose range was asked for again before their `Retry-After` had passed.
    public var askedBeforeRetryAfter: Int?
    public var largestBody: Int64?
    /// Lesson 06's crowd: the other transfers the server sent the whole file to, and how many the
    /// crowd has (one per core); nil where no crowd was asked for.
    public var crowd: (fetched: Int, wanted: Int)?
    /// The folder of the file the run reported, relative to its output folder (lesson 10's app
    /// container); nil when the file is not inside it.
    public var keptIn: String?
    /// Lesson 11: whether the file holds the text of a 503 page; nil where not looked for.
    public var busyPageInTheFile: Bool?
    /// The error status the trial's script played, when the server answered a request with it.
    public var statusAnswered: Int?
    /// The message of the program's error, from its record.
    public var errorMessage: String?
    /// For a trial that kills: what the file under the resource's name held at the kill.
    public var fileAtTheKill: FileState?
    /// A run's record said the code started a program, which an iOS app cannot.
    public var startedAProgram: Bool
    /// Uploads the server received that the run's session never sent (exercise 07).
    public var uploadsAroundTheSession: Int
    /// Why a run's standard output was not its record (a `print` of the program's own, a record
    /// cut short); nil when it was, or when it printed nothing.
    public var recordProblem: String?

    public init(ending: Ending, outcome: Outcome?, file: FileState, fileName: String?, resourceName: String, size: Int64,
                breakOffset: Int64?, afterTheBreak: AfterTheBreak? = nil, firstEnding: Ending? = nil,
                memoryGrowth: Double?, sentHEAD: Bool, uploadExtraBytes: Int64?, progress: ProgressRecord? = nil,
                bytesSent: Int64? = nil, requestsSent: Int? = nil, background: BackgroundRecord? = nil,
                mostAtOnce: Int? = nil, largestBody: Int64? = nil, askedBeforeRetryAfter: Int? = nil,
                crowd: (fetched: Int, wanted: Int)? = nil, keptIn: String? = nil, busyPageInTheFile: Bool? = nil,
                statusAnswered: Int? = nil, errorMessage: String? = nil, fileAtTheKill: FileState? = nil, startedAProgram: Bool = false,
                uploadsAroundTheSession: Int = 0, recordProblem: String? = nil) {
        self.recordProblem = recordProblem
        self.startedAProgram = startedAProgram
        self.uploadsAroundTheSession = uploadsAroundTheSession
        self.fileAtTheKill = fileAtTheKill
        self.statusAnswered = statusAnswered
        self.errorMessage = errorMessage
        self.crowd = crowd
        self.keptIn = keptIn
        self.busyPageInTheFile = busyPageInTheFile
        self.ending = ending
        self.outcome = outcome
        self.file = file
        self.fileName = fileName
        self.resourceName = resourceName
        self.size = size
        self.breakOffset = breakOffset
        self.afterTheBreak = afterTheBreak
        self.firstEnding = firstEnding
        self.memoryGrowth = memoryGrowth
        self.sentHEAD = sentHEAD
        self.uploadExtraBytes = uploadExtraBytes
        self.progress = progress
        self.bytesSent = bytesSent
        self.requestsSent = requestsSent
        self.background = background
        self.mostAtOnce = mostAtOnce
        self.askedBeforeRetryAfter = askedBeforeRetryAfter
        self.largestBody = largestBody
    }

    /// The program said it was done and LabKit's own check of the file then failed: exit 65.
    public var claimedDone: Bool { ending == .exited(65) && outcome == .verificationFailed }
    public var verified: Bool { ending == .exited(0) && file == .right }

    /// A stop of its own with `status`, and nothing wrong left behind: no file, or the start of
    /// the right one to resume from. A stop after an error status names it, as the user is told:
    /// code that never read the status cannot.
    public func stopped(with status: ExitStatus) -> Bool {
        guard ending == .exited(status.rawValue), !stopMissesTheStatus else { return false }
        switch file {
        case .missing, .startOfTheFile: return true
        default: return false
        }
    }

    /// Whether the file under the resource's name held only part of the file, or another file,
    /// when the program was killed.
    public var partUnderTheNameAtTheKill: Bool {
        fileAtTheKill.map { $0 != .missing && $0 != .right } == true
    }

    /// Whether the program stopped on a transfer failure after the server answered an error
    /// status, with a message that does not say `HTTP <status>`.
    public var stopMissesTheStatus: Bool {
        guard ending == .exited(ExitStatus.transferFailed.rawValue), let statusAnswered else { return false }
        return errorMessage?.contains("HTTP \(statusAnswered)") != true
    }
}

/// A break and the request after it, as the server logged them. The server knows what it sent:
/// every byte before `reached` of the broken transfer went out, and the next GET says where it
/// starts. What it asks for again is what the program did not keep.
public struct AfterTheBreak: Sendable, Equatable {
    /// The offset in the file the broken transfer had reached.
    public var reached: Int64
    /// The `Range` header of the first GET after the break, as sent; nil without one.
    public var range: String?
    /// The status the server answered that GET with.
    public var status: Int?

    public init(reached: Int64, range: String?, status: Int? = nil) {
        self.reached = reached
        self.range = range
        self.status = status
    }

    /// The first byte the request after the break asked for: N of "bytes=N-"; 0 without such a Range.
    public var resumedFrom: Int64 { range.flatMap(RangeHeader.start(of:)) ?? 0 }

    /// The bytes before the break that were asked for again.
    public var fetchedAgain: Int64 { max(0, reached - resumedFrom) }
}

/// The file a program left, compared byte for byte with the one it should have.
public enum FileState: Sendable, Equatable {
    case right
    case missing
    /// Shorter, and every byte right: a partial file to resume from.
    case startOfTheFile(bytes: Int64)
    case longer(bytes: Int64)
    /// Shorter, with wrong bytes in it.
    case shorter(bytes: Int64)
    case rightSizeWrongBytes
    case errorPage
}

extension Symptom {
    /// Whether `observation` shows this symptom.
    public func isShown(in observation: Observation) -> Bool {
        switch self {
        case .claimsDone(let problem):
            return observation.claimedDone && problem.describes(observation.file, size: observation.size, breakOffset: observation.breakOffset)
        case .startsOver:
            guard observation.verified, let resume = observation.afterTheBreak else { return false }
            return resume.resumedFrom == 0 || resume.fetchedAgain > Symptom.wasteAllowed
        case .holdsInMemory(let multiple):
            return (observation.memoryGrowth ?? 0) > multiple
        case .sendsHEAD:
            return observation.verified && observation.sentHEAD
        case .fetchesAgain(let requestsAllowed):
            guard observation.verified else { return false }
            return (observation.bytesSent ?? 0) > observation.size + Symptom.wasteAllowed
                || requestsAllowed.map { (observation.requestsSent ?? 0) > $0 } == true
        case .bodyWhenCurrent(let requestsAllowed):
            guard observation.verified else { return false }
            return (observation.bytesSent ?? 0) > observation.size || (observation.requestsSent ?? 0) > requestsAllowed
        case .misnamesTheFile:
            return observation.verified && observation.fileName != observation.resourceName
        case .uploadArrivesLonger(let bytes):
            return observation.ending == .exited(65) && observation.uploadExtraBytes == bytes
        case .starvesTheGlobalQueue:
            // A crowd never started cannot starve anything: the check's scenario was dodged.
            return observation.outcome == .unresponsive || observation.crowd.map { $0.fetched < $0.wanted } == true
        case .misreportsProgress(let totalAnnounced):
            guard let progress = observation.progress else { return false }
            return progress.reports == 0 || (progress.highestPercent ?? 0) > 100 || progress.totals.contains { $0 != observation.size }
                || (totalAnnounced && progress.reportsWithTotal == 0)
        case .doesNotResume:
            if observation.claimedDone || Symptom.startsOver.isShown(in: observation) { return true }
            return observation.verified && observation.afterTheBreak.map { $0.status != 206 } == true
        case .breaksBackgroundRule(let rule):
            return rule.isBroken(in: observation)
        case .roundTrips(let allowed):
            return (observation.requestsSent ?? 0) > allowed
        case .resumesAnotherInstall:
            return observation.afterTheBreak?.range != nil
        case .ignoresRetryAfter:
            return (observation.askedBeforeRetryAfter ?? 0) > 0
        case .notSideBySide(let ranges):
            guard observation.verified, let mostAtOnce = observation.mostAtOnce, let largest = observation.largestBody else { return false }
            // One range may start late (the first GET's answer ends before the last range's GET
            // is made on a loaded machine), so one fewer than asked counts as side by side.
            return mostAtOnce < ranges - 1 || largest * Int64(ranges) * 2 > observation.size * 3
        }
    }
}

extension Symptom {
    /// Whether the run came to where the symptom could show. A run that did not shows nothing,
    /// so its check is "not reached", not passed.
    public func isReached(in observation: Observation) -> Bool {
        guard case .breaksBackgroundRule(let rule) = self else { return true }
        return rule.isReached(in: observation)
    }

    /// Why a run did not reach the symptom, naming the check of what stopped it.
    public var notReachedBecause: String {
        let sessionCheck = Catalogue.lessons.lazy.flatMap(\.everyDefect).first { $0.symptom == .breaksBackgroundRule(.sessionMadeAtLaunch) }
        return "events were left waiting for a session the relaunched app never made (\(sessionCheck?.id ?? "the session at launch")), "
            + "so this defect could not show yet"
    }
}

extension BackgroundRule {
    /// Moving the file, hearing a force-quit and making a second session all happen in a launch
    /// whose session hears its events: where events were left waiting for a session never made,
    /// none of these could show.
    public func isReached(in observation: Observation) -> Bool {
        guard let life = observation.background else { return false }
        switch self {
        case .fileMovedBeforeReturn, .oneSessionPerIdentifier: return life.launchesWithEventsLeft == 0
        case .forceQuitNotRetried: return life.launchesWithEventsLeft == 0 && life.forceQuitCancellationsUnheard == 0
        case .downloadOutlivesTheApp, .sessionMadeAtLaunch, .completionHandlerCalled, .oneDownloadAtATime, .resumesWithALimit: return true
        }
    }

    /// Whether `observation` shows the rule broken: an app that never gave the transfer service
    /// a task breaks every one.
    public func isBroken(in observation: Observation) -> Bool {
        guard let life = observation.background, life.backgroundTasks > 0 else { return true }
        switch self {
        case .downloadOutlivesTheApp:
            let sentTwice = (observation.bytesSent ?? 0) - observation.size
            return life.relaunchesForEvents + life.wakes == 0 || sentTwice > Symptom.wasteAllowed
        case .fileMovedBeforeReturn:
            return life.filesHandedOver > 0 && observation.file != .right
        case .sessionMadeAtLaunch:
            return life.launchesWithEventsLeft > 0
        case .completionHandlerCalled:
            return life.handlersNeverCalled + life.handlersOffTheMainQueue + life.handlersBeforeTheEvents > 0
        case .forceQuitNotRetried:
            return life.forceQuits == 0 || life.tasksStartedUnaskedAfterForceQuit > 0
        case .oneSessionPerIdentifier:
            return life.mostSessionsPerIdentifier > 1
        case .oneDownloadAtATime:
            return life.backgroundTasks > 1
        case .resumesWithALimit:
            return life.backgroundTasks > Self.tasksForOneStart * max(1, life.launchesByUser)
        }
    }
}

extension FileProblem {
    func describes(_ file: FileState, size: Int64, breakOffset: Int64?) -> Bool {
        switch (self, file) {
        case (.missing, .missing), (.rightSizeWrongBytes, .rightSizeWrongBytes), (.errorPage, .errorPage):
            return true
        case (.scrambled, let file):
            return file != .right && file != .missing
        case (.longer(let amount), .longer(let bytes)):
            return amount.matches(bytes - size, breakOffset: breakOffset)
        case (.shorter(let amount), .shorter(let bytes)), (.shorter(let amount), .startOfTheFile(let bytes)):
            return amount.matches(size - bytes, breakOffset: breakOffset)
        default:
            return false
        }
    }
}

extension FileProblem.Amount {
    func matches(_ bytes: Int64, breakOffset: Int64?) -> Bool {
        switch self {
        case .bytes(let expected): bytes == expected
        case .bytesBeforeTheBreak: bytes == breakOffset
        case .some: bytes > 0
        }
    }
}

extension Fix {
    /// Whether `observation` is what a fixed program does, for a check whose failure shows as `symptom`.
    public func holds(in observation: Observation, despite symptom: Symptom?) -> Bool {
        if symptom?.isShown(in: observation) == true { return false }
        switch self {
        case .verifies: return observation.verified
        case .verifiesOrStops(let status): return observation.verified || observation.stopped(with: status)
        case .stopsThenRerunVerifies(let status): return observation.verified && observation.firstEnding == .exited(status.rawValue)
        }
    }
}
