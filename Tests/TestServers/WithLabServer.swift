import LabServer

/// Runs `body` against a lab server of its own on a free loopback port, and stops the server when
/// `body` returns or throws. A closure whose only `try` is inside `#expect` must say `throws`
/// itself (`{ server throws in`): Swift does not look inside a macro to infer it.
@discardableResult
public func withLabServer<Result>(_ body: (LabServer) throws -> Result) throws -> Result {
    let server = try LabServer.start()
    defer { server.stop() }
    return try body(server)
}

/// The same, for async code, where NIO's blocking start is not allowed.
@discardableResult
public func withLabServer<Result>(_ body: (LabServer) async throws -> Result) async throws -> Result {
    let server = try await LabServer.startAsync()
    defer { server.stop() }
    return try await body(server)
}
