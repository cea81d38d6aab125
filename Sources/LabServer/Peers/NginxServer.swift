import Foundation
import LabPlatform

/// A real nginx on a free loopback port, serving the files in `root` and pacing each connection
/// with `limit_rate`, as a site limits each download: the peer `lab compare` measures lesson 11
/// against, and the real server of the end-to-end tests. Everything it writes lives in the
/// folder it is given, which its caller removes.
public final class NginxServer {
    /// Put the files to serve here; `url(_:)` names them.
    public let root: URL
    public let port: Int
    private let process = Process()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// - Parameters:
    ///   - rate: `limit_rate`: bytes a second for each connection (`8m` is 8 MiB/s), `0` for no limit.
    ///   - directives: more for the server block, e.g. `if_modified_since before;`.
    public init(program: URL, in folder: URL, rate: String, directives: String = "") throws {
        root = folder.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        guard let port = Platform.freeLoopbackPort() else { throw Failure(description: "cannot find a free port for nginx") }
        self.port = port
        let temporary = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map { "\($0)_temp_path \(folder.path)/\($0);" }
        let configuration = """
            master_process off;
            daemon off;
            worker_processes 1;
            error_log \(folder.path)/error.log;
            pid \(folder.path)/nginx.pid;
            events { worker_connections 64; }
            http {
                access_log off;
                \(temporary.joined(separator: "\n    "))
                server {
                    listen 127.0.0.1:\(port);
                    root \(root.path);
                    limit_rate \(rate);
                    \(directives)
                }
            }
            """
        let file = folder.appendingPathComponent("nginx.conf")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        process.executableURL = program
        process.arguments = ["-p", folder.path, "-c", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try waitUntilListening()
    }

    public func url(_ name: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(name)")! }

    public func stop() {
        // SIGKILL: a child of a process with signals blocked (a test runner) would wait forever on SIGTERM.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    private func waitUntilListening() throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if Platform.acceptsConnections(onLoopbackPort: port) { return }
            usleep(50_000)
        }
        stop()
        throw Failure(description: "nginx did not start listening on 127.0.0.1:\(port) within 10 s")
    }
}
