/// What a fixture's bytes look like: random bytes, which no compressor can shrink, or lines of
/// text like a server's log, which gzip shrinks several times over.
public enum FixtureContent: String, CaseIterable, Sendable, LabName {
    case binary
    case text
}
