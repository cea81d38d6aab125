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
    /// Bytes the server sent beyond the file's size, as a share of it.
    public var downloadedAgainShare: Double
    /// Peak RSS above the clean run's, as a multiple of the file's size; nil when not measured.
    public var memoryGrowth: Double?
    public var sentHEAD: Bool
    /// For an upload: the server's file part minus the file sent, in bytes.
    public var uploadExtraBytes: Int64?

    public init(ending: Ending, outcome: Outcome?, file: FileState, fileName: String?, resourceName: String, size: Int64,
                breakOffset: Int64?, downloadedAgainShare: Double, memoryGrowth: Double?, sentHEAD: Bool,
                uploadExtraBytes: Int64?) {
        self.ending = ending
        self.outcome = outcome
        self.file = file
        self.fileName = fileName
        self.resourceName = resourceName
        self.size = size
        self.breakOffset = breakOffset
        self.downloadedAgainShare = downloadedAgainShare
        self.memoryGrowth = memoryGrowth
        self.sentHEAD = sentHEAD
        self.uploadExtraBytes = uploadExtraBytes
    }

    /// The program said it was done and LabKit's own check of the file then failed: exit 65.
    public var claimedDone: Bool { ending == .exited(65) && outcome == .verificationFailed }
    public var verified: Bool { ending == .exited(0) && file == .right }

    /// A stop of its own: a non-zero exit other than 65, no crash, nothing wrong left behind.
    public var stoppedCleanly: Bool {
        guard case .exited(let status) = ending, status != 0, status != 65 else { return false }
        switch file {
        case .missing, .startOfTheFile: return true
        default: return false
        }
    }
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
        case .downloadsAgain(let share):
            return observation.verified && observation.downloadedAgainShare > share
        case .holdsInMemory(let multiple):
            return (observation.memoryGrowth ?? 0) > multiple
        case .sendsHEAD:
            return observation.verified && observation.sentHEAD
        case .misnamesTheFile:
            return observation.verified && observation.fileName != observation.resourceName
        case .uploadArrivesLonger(let bytes):
            return observation.ending == .exited(65) && observation.uploadExtraBytes == bytes
        case .starvesTheGlobalQueue:
            return observation.outcome == .unresponsive
        }
    }
}

extension FileProblem {
    func describes(_ file: FileState, size: Int64, breakOffset: Int64?) -> Bool {
        switch (self, file) {
        case (.missing, .missing), (.rightSizeWrongBytes, .rightSizeWrongBytes), (.errorPage, .errorPage):
            return true
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
    /// Whether `observation` is what a fixed program does, for a defect with `symptom`.
    public func holds(in observation: Observation, despite symptom: Symptom) -> Bool {
        if symptom.isShown(in: observation) { return false }
        switch self {
        case .verifies: return observation.verified
        case .verifiesOrStopsCleanly: return observation.verified || observation.stoppedCleanly
        }
    }
}
