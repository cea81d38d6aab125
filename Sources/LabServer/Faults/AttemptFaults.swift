/// The faults of one attempt, sorted by what they affect: which response is chosen
/// (redirect, status, ignore-range, shift-range) and how its body is sent (`BodyPlan`).
import LabVocabulary
struct AttemptFaults {
    var drop: FaultScript.Offset?
    var bytesPerSecond: Int64?
    var stall: (offset: FaultScript.Offset, duration: Duration?)?
    var ignoreRange = false
    var statusCode: Int?
    var redirectHops: Int?
    var lengthError: Int64?
    var rangeShift: Int64?

    init(_ faults: [FaultScript.Fault]) {
        for fault in faults {
            switch fault {
            case .drop(let offset): drop = offset
            case .throttle(let rate): bytesPerSecond = rate
            case .stall(let offset, let duration): stall = (offset, duration)
            case .ignoreRange: ignoreRange = true
            case .change: break // already counted in the generation
            case .status(let code): statusCode = code
            case .redirect(let hops): redirectHops = hops
            case .badLength(let delta): lengthError = delta
            case .shiftRange(let offset): rangeShift = offset
            }
        }
    }

    func bodyPlan(bodyLength: Int64) -> BodyPlan {
        BodyPlan(
            dropAfter: drop?.resolved(bodyLength: bodyLength),
            stallAt: stall.map { $0.offset.resolved(bodyLength: bodyLength) },
            stallDuration: stall?.duration,
            bytesPerSecond: bytesPerSecond,
            closeWhenDone: lengthError != nil
        )
    }
}

/// Body faults with offsets resolved against the actual body length.
struct BodyPlan {
    var dropAfter: Int64?
    var stallAt: Int64?
    /// nil with a `stallAt` means stall until the connection closes.
    var stallDuration: Duration?
    var bytesPerSecond: Int64?
    /// A lying Content-Length leaves the connection unusable, so it must be closed.
    var closeWhenDone: Bool
}
