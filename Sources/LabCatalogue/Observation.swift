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
    /// Bytes the server sent beyond the file's size: what came twice.
    public var resentBytes: Int64
    /// The first GET after the break (the second GET of one run, the first of the rerun), and
    /// its `Range` header; nil when there was none.
    public var requestAfterTheBreak: RequestAfterTheBreak?
    /// How the first run ended, when the trial has two.
    public var firstEnding: Ending?
    /// Peak RSS above the clean run's, as a multiple of the file's size; nil when not measured.
    public var memoryGrowth: Double?
    public var sentHEAD: Bool
    /// For an upload: the server's file part minus the file sent, in bytes.
    public var uploadExtraBytes: Int64?

    public init(ending: Ending, outcome: Outcome?, file: FileState, fileName: String?, resourceName: String, size: Int64,
                breakOffset: Int64?, resentBytes: Int64, requestAfterTheBreak: RequestAfterTheBreak? = nil,
                firstEnding: Ending? = nil, memoryGrowth: Double?, sentHEAD: Bool, uploadExtraBytes: Int64?) {
        self.ending = ending
        self.outcome = outcome
        self.file = file
        self.fileName = fileName
        self.resourceName = resourceName
        self.size = size
        self.breakOffset = breakOffset
        self.resentBytes = resentBytes
        self.requestAfterTheBreak = requestAfterTheBreak
        self.firstEnding = firstEnding
        self.memoryGrowth = memoryGrowth
        self.sentHEAD = sentHEAD
        self.uploadExtraBytes = uploadExtraBytes
    }

    /// The program said it was done and LabKit's own check of the file then failed: exit 65.
    public var claimedDone: Bool { ending == .exited(65) && outcome == .verificationFailed }
    public var verified: Bool { ending == .exited(0) && file == .right }

    /// A stop of its own with `status`, and nothing wrong left behind: no file, or the start of
    /// the right one to resume from.
    public func stopped(with status: ExitStatus) -> Bool {
        guard ending == .exited(status.rawValue) else { return false }
        switch file {
        case .missing, .startOfTheFile: return true
        default: return false
        }
    }

    /// Where the resume started: the first byte the request after the break asked for; 0 when
    /// it asked for the whole file.
    public var resumedFrom: Int64? {
        requestAfterTheBreak.map { $0.range.flatMap(RequestAfterTheBreak.firstByte(of:)) ?? 0 }
    }
}

/// The first GET after a break, as the server logged it.
public struct RequestAfterTheBreak: Sendable, Equatable {
    /// Its `Range` header as sent; nil without one.
    public var range: String?

    public init(range: String?) { self.range = range }

    /// N of "bytes=N-" or "bytes=N-M"; nil for anything else.
    static func firstByte(of range: String) -> Int64? {
        guard range.hasPrefix("bytes="), let dash = range.firstIndex(of: "-") else { return nil }
        return Int64(range[range.index(range.startIndex, offsetBy: 6)..<dash])
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
        case .startsOver:
            return observation.verified
                && ((observation.resumedFrom ?? 0) == 0 || observation.resentBytes > Symptom.wasteAllowed)
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
