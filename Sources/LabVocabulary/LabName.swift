/// One of the lab's names: a closed set whose raw values are how the command line, the JSON and
/// the report spell them. It prints as spelled (`drop-resume`, not `dropResume`), so a name in a
/// message or a file name reads the same as on the command line.
public protocol LabName: RawRepresentable, CustomStringConvertible where RawValue == String {}

extension LabName {
    public var description: String { rawValue }
}
