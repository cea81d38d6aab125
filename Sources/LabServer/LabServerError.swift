/// The one error type of this module. Its message is a single line, because it ends up
/// in an HTTP 400 body or on a terminal, where a student should read it at a glance.
public struct LabServerError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
