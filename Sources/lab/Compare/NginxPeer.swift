import Foundation
import LabFixtures
import LabPlatform

/// A real nginx on a free loopback port, serving one file and pacing each connection with
/// `limit_rate`, as a site limits each download: the connections comparison's second server.
/// Everything it needs lives in a folder of the comparison's own, removed with it.
final class NginxPeer {
    let url: URL
    private let process = Process()
    private let folder: URL

    /// Debian keeps nginx in /usr/sbin, which is not on a user's PATH.
    static var program: URL? {
        References.which("nginx") ?? ["/usr/sbin/nginx", "/usr/local/sbin/nginx"].map(URL.init(fileURLWithPath:))
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    init(program: URL, serving fixture: Fixture, pace bytesPerSecond: Int64, in folder: URL) throws {
        self.folder = folder
        let root = folder.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try fixture.write(to: root.appendingPathComponent(fixture.name))
        guard let port = Platform.freeLoopbackPort() else { throw CompareError("cannot find a free port for nginx") }
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
                    limit_rate \(bytesPerSecond);
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
        url = URL(string: "http://127.0.0.1:\(port)/\(fixture.name)")!
        try waitUntilListening(port: port)
    }

    func stop() {
        // SIGKILL: a child of a process with signals blocked would wait forever on SIGTERM.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { stop() }

    private func waitUntilListening(port: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            if Platform.acceptsConnections(onLoopbackPort: port) { return }
            usleep(50_000)
        }
        stop()
        throw CompareError("nginx did not start listening on 127.0.0.1:\(port) within 10 s")
    }
}
