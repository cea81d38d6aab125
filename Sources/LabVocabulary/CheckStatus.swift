/// What one check of an exercise found (`lab exercise check`; in its JSON as `status`).
public enum CheckStatus: String, Codable, Sendable, CaseIterable, LabName {
    case fixed
    case stillThere = "still-there"
    /// The clean download's check: it verifies, or it fails.
    case verifies
    /// A skill's check (what the lesson teaches): it holds, or it fails.
    case holds
    case fails
    case timedOut = "timed-out"
    case crashed
    case notRun = "not-run"
    /// The run held, but never came to where the check's defect would show: another failure
    /// stopped it first. Not credited; it is judged once that failure is fixed.
    case notReached = "not-reached"
    case doesNotCompile = "does-not-compile"

    /// Whether the check held: fixed, verifies or holds.
    public var isHeld: Bool { self == .fixed || self == .verifies || self == .holds }
}
