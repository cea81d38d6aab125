/// Which version of a lesson's strategy runs.
public enum Variant: String, Codable, Sendable, CaseIterable, LabName {
    /// The article's logic, defects included.
    case article
    /// The same strategy with the defects fixed.
    case corrected
}
