/// The faults of one attempt, sorted by what they affect: which response is chosen
/// (redirect, status, ignore-range, shift-range, ignore-conditionals) and how its body is sent (`BodyPlan`).
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
    var chunked = false
    var dispositionName: String?
    /// The wait before the head: `latency:`, or a profile's latency and its jitter.
    var latency: Duration?
    /// The wait before each body write after the first (`latency:` only: a profile's latency
    /// is a round trip, paid once per request).
    var writeGap: Duration?
    var profile: LossyLink?
    var gzip = false
    var cacheControl: String?
    var ignoreConditionals = false
    var noValidators = false
    var sameDate = false
    var connectionLimit: Int?

    /// `seed` makes a profile's jitter, pauses and resets the same each time the same URL plays
    /// the same attempt, so a run can be repeated.
    init(_ faults: [FaultScript.Fault], seed: UInt64 = 0) {
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
            case .chunked: chunked = true
            case .disposition(let filename): dispositionName = filename
            case .latency(let duration): (latency, writeGap) = (duration, duration)
            case .gzip: gzip = true
            case .cacheControl(let value): cacheControl = value
            case .ignoreConditionals: ignoreConditionals = true
            case .noValidators: noValidators = true
            case .sameDate: sameDate = true
            case .connections(let limit): connectionLimit = limit
            case .profile(let network):
                let link = LossyLink(network, seed: seed)
                profile = link
                bytesPerSecond = network.bytesPerSecond
                latency = link.latencyWithJitter
            }
        }
    }

    func bodyPlan(bodyLength: Int64) -> BodyPlan {
        BodyPlan(
            dropAfter: drop?.resolved(bodyLength: bodyLength) ?? profile?.reset(bodyLength: bodyLength),
            stallAt: stall.map { $0.offset.resolved(bodyLength: bodyLength) },
            stallDuration: stall?.duration,
            bytesPerSecond: bytesPerSecond,
            closeWhenDone: lengthError != nil,
            writeGap: writeGap,
            pauses: profile?.pauses(bodyLength: bodyLength) ?? []
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
    /// A pause before each write of the body (`latency:`).
    var writeGap: Duration?
    /// Where a lossy link pauses the body, and for how long; in order.
    var pauses: [(at: Int64, duration: Duration)] = []
}

/// A profile's link, made concrete for one attempt. User space cannot drop TCP segments, so loss
/// shows as what it costs the receiver: now and then the body pauses for a retransmission
/// timeout, and rarely the connection resets. Which stretch pauses is drawn from `seed`.
package struct LossyLink {
    let network: NetworkProfile
    let seed: UInt64

    package init(_ network: NetworkProfile, seed: UInt64) {
        self.network = network
        self.seed = seed
    }

    /// Each stretch of this many bytes may pause once.
    static let stretch: Int64 = 64 << 10

    /// The profile's latency and up to a fifth more: never less than the latency itself.
    package var latencyWithJitter: Duration {
        .milliseconds(network.latencyMilliseconds + Int64(Double(network.latencyMilliseconds) * 0.2 * draw(0)))
    }

    /// A retransmission timeout: twice the round trip, at least 200 ms (RFC 6298's floor as
    /// Linux sets it).
    var retransmissionTimeout: Duration { .milliseconds(max(200, 2 * network.latencyMilliseconds)) }

    /// A stretch pauses with twice the loss rate's chance: a lost segment among a stretch's
    /// forty-odd costs a timeout only sometimes, fast retransmit covers the rest.
    package func pauses(bodyLength: Int64) -> [(at: Int64, duration: Duration)] {
        let chance = network.lossPercent / 100 * 2
        var pauses: [(at: Int64, duration: Duration)] = []
        var (offset, index): (Int64, UInt64) = (Self.stretch, 1)
        while offset < bodyLength {
            if draw(index) < chance { pauses.append((at: offset, duration: retransmissionTimeout)) }
            (offset, index) = (offset + Self.stretch, index + 1)
        }
        return pauses
    }

    /// Where the connection resets, if it does: each MiB with a quarter of the loss rate's chance.
    package func reset(bodyLength: Int64) -> Int64? {
        let chance = network.lossPercent / 100 / 4
        let mebibyte: Int64 = 1 << 20
        var (offset, index): (Int64, UInt64) = (0, 1 << 32)
        while offset < bodyLength {
            // Before the last byte: a reset after the whole body would only cut off the response's end.
            if draw(index) < chance { return min(bodyLength - 1, offset + Int64(draw(index + (1 << 31)) * Double(mebibyte))) }
            (offset, index) = (offset + mebibyte, index + 1)
        }
        return nil
    }

    /// A number in 0..<1 for `index`, the same for the same seed (SplitMix64's finalizer).
    private func draw(_ index: UInt64) -> Double {
        var z = seed &+ (index &+ 1) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z &>> 31)) >> 11) / Double(1 << 53)
    }
}

/// `Content-Disposition: attachment` naming `filename` as RFC 6266 has servers do: `filename=`
/// for old clients, with what is not printable ASCII as `_` and `"` `\` escaped, then
/// `filename*=UTF-8''` with every byte but letters, digits and `!#$&+-.^_`|~` percent-encoded
/// (RFC 8187). Nothing of the name is made safe beyond that: a client must.
enum ContentDisposition {
    static func attachment(_ filename: String) -> String {
        let fallback = filename.unicodeScalars.map { scalar -> String in
            guard scalar.isASCII, scalar.value >= 0x20, scalar.value != 0x7F else { return "_" }
            return scalar == "\"" || scalar == "\\" ? "\\" + String(scalar) : String(scalar)
        }.joined()
        let encoded = PercentEncoding.encoded(filename, keeping: "!#$&+-.^_`|~")
        return "attachment; filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)"
    }
}
