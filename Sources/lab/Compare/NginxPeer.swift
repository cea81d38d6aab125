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
        let port = try Self.freePort()
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

    /// A port the kernel picks for a socket bound to port 0, then released for nginx.
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Platform.streamSocket, 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw CompareError("cannot find a free port for nginx") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private func waitUntilListening(port: Int) throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, process.isRunning {
            let descriptor = socket(AF_INET, Platform.streamSocket, 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(descriptor)
            if connected { return }
            usleep(50_000)
        }
        stop()
        throw CompareError("nginx did not start listening on 127.0.0.1:\(port) within 10 s")
    }
}
