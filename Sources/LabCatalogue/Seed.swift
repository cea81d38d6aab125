import LabVocabulary

/// What a round of checks varies its trials by. From it each check gets its error status, the
/// points where its transfers break and the size of its file, so code tuned to one run's numbers
/// (a hard-coded 404, a cut expected at 40%) meets others, while `--seed` plays a failure again
/// exactly. The variation keeps every trial's meaning: a status is still an error, a break still
/// comes before the end and in the same attempt, and a file is never smaller than declared. An
/// error status that ends a script is kept for the GETs after it, as a real server's is.
public struct CheckSeed: Sendable, Hashable, CustomStringConvertible {
    public let value: UInt32

    public init(_ value: UInt32) { self.value = value }

    /// The trials as the catalogue declares them, with the figures its pages quote.
    public static let declared = CheckSeed(0)

    /// A seed for a round nobody asked to replay.
    public static func random() -> CheckSeed { CheckSeed(UInt32.random(in: 1...UInt32.max)) }

    public var description: String { String(value) }

    /// The statuses a trial's `status:404` is played as: each outside 200...299, none with a
    /// meaning a client acts on by itself (no 3xx, no 416, no 429 or 503 with their Retry-After),
    /// and never the 404 the catalogue declares, which code that knows only 404 would pass.
    public static let errorStatuses = [400, 403, 410, 451]
    /// A status that ends a trial's script answers this many GETs: a file that is gone stays
    /// gone, so a throwaway request made first does not use the status up.
    public static let statusLasts = 8
    /// How far a break given as a share of the body moves, in points, and the bounds it stays in.
    public static let breakShifts = [-10, -5, 0, 5, 10]
    public static let breakBounds = 10...90
    /// The sizes a file may have, in sixteenths of the declared one: never smaller, so that every
    /// bound a trial's size was chosen for still holds.
    public static let sizeSixteenths: [Int64] = [16, 17, 18]
    /// Sizes stay whole multiples of this: a cut at a block's edge stays one.
    public static let sizeStep: Int64 = 64 << 10

    /// The numbers for one check: the same seed and check give the same ones on any machine.
    func numbers(for checkID: String) -> SeededNumbers {
        // FNV-1a over the check's name, mixed with the seed.
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in checkID.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return SeededNumbers(state: hash ^ (UInt64(value) &* 0x9e37_79b9_7f4a_7c15))
    }
}

/// SplitMix64: small, and the same numbers on every platform, which the standard library's
/// generator does not promise.
struct SeededNumbers {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func pick<T>(_ choices: [T]) -> T { choices[Int(next() % UInt64(choices.count))] }
}

extension Trial {
    /// This trial as `seed` varies it for the check `checkID`; seed 0 plays it as declared.
    public func varied(by seed: CheckSeed, for checkID: String) -> Trial {
        guard seed != .declared else { return self }
        var numbers = seed.numbers(for: checkID)
        let status = numbers.pick(CheckSeed.errorStatuses)
        let shift = numbers.pick(CheckSeed.breakShifts)
        let sixteenths = numbers.pick(CheckSeed.sizeSixteenths)
        var trial = self
        var attempts = faults.attempts.map { attempt in
            attempt.map { fault in Self.varied(fault, status: status, shift: shift) }
        }
        if let last = attempts.last, last.contains(where: \.isStatus) {
            attempts += Array(repeating: last, count: max(0, CheckSeed.statusLasts - attempts.count))
        }
        trial.faults = FaultScript(attempts: attempts)
        trial.size = max(size, size * sixteenths / 16 / CheckSeed.sizeStep * CheckSeed.sizeStep)
        return trial
    }

    private static func varied(_ fault: FaultScript.Fault, status: Int, shift: Int) -> FaultScript.Fault {
        func moved(_ offset: FaultScript.Offset) -> FaultScript.Offset {
            guard case .percent(let percent) = offset else { return offset }
            return .percent(min(max(percent + shift, CheckSeed.breakBounds.lowerBound), CheckSeed.breakBounds.upperBound))
        }
        switch fault {
        case .status(let code) where code == 404: return .status(code: status)
        case .drop(let offset): return .drop(after: moved(offset))
        case .stall(let offset, let duration): return .stall(after: moved(offset), duration: duration)
        default: return fault
        }
    }
}

