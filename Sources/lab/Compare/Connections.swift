import Foundation
import LabFixtures
import LabHarness
import LabKit
import LabServer
import LabVocabulary

/// Lesson 11 beside the download managers: one file fetched over 1, 2, 4 and 8 connections from
/// the lab server, which paces each connection as a CDN does, and from nginx pacing each with
/// `limit_rate`. Each run once: its time is the pace's (seconds), far above one run's noise.
struct Connections {
    let server: LabServer
    let executables: URL
    let workFolder: URL
    let digests: DigestCache

    /// A sixteenth of the file a second, at least 16 MiB/s: one connection takes 1 s for 16 MiB
    /// and 16 s for 1 GiB, and eight are still within what loopback carries, or show where not.
    static func pace(forFileOf size: Int64) -> Int64 { max(16 << 20, size / 16) }

    func measure(size: Int64, progress: (String) -> Void) throws -> [ComparisonResults.ConnectionsRun] {
        let fixture = Fixture(name: "connections-\(size).bin", size: size)
        let pace = Self.pace(forFileOf: size)
        var runs = try measure(fixture, from: .lab, pace: pace, progress: progress) { token in
            server.url(for: fixture, faults: "throttle:\(ByteSize.format(pace))*\(FaultScript.mostRepeats)", run: token)
        }
        guard let program = References.nginx else {
            progress("connections: nginx is not installed here; its runs are left out")
            return runs
        }
        let folder = workFolder.appendingPathComponent("connections-nginx")
        defer { try? FileManager.default.removeItem(at: folder) }
        let nginx = try NginxServer(program: program, in: folder, rate: String(pace))
        defer { nginx.stop() }
        try fixture.write(to: nginx.root.appendingPathComponent(fixture.name))
        runs += try measure(fixture, from: .nginx, pace: pace, progress: progress) { _ in nginx.url(fixture.name) }
        return runs
    }

    /// Every program at every count against one server; `url` gives a run token its URL.
    private func measure(_ fixture: Fixture, from server: ConnectionsServer, pace: Int64, progress: (String) -> Void,
                         url: (String) -> URL) throws -> [ComparisonResults.ConnectionsRun] {
        var runs: [ComparisonResults.ConnectionsRun] = []
        for program in ConnectionsProgram.allCases {
            guard let binary = binary(program) else {
                progress("connections: \(program.rawValue) is not installed here; its runs are left out")
                continue
            }
            for count in program.splits ? ComparisonResults.connectionCounts : [1] {
                let token = "connections-\(UUID().uuidString.prefix(8))"
                let run = try once(program, binary: binary, connections: count, fixture: fixture, from: server, url: url(token),
                                   token: token, pace: pace)
                runs.append(run)
                progress("connections \(server.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)) "
                    + "\(program.rawValue.padding(toLength: 20, withPad: " ", startingAt: 0)) ×\(count)  "
                    + "\(ByteFormat.iec(fixture.size))  \(String(format: "%6.2f s", run.wallSeconds))  "
                    + "\(ByteFormat.iec(Int64(run.throughputBytesPerSecond)))/s  peak \(ByteFormat.iec(run.peakRSSBytes))"
                    + (run.fetchedTwiceBytes.map { "  fetched twice \(ByteFormat.iec($0))" } ?? ""))
            }
        }
        return runs
    }

    private func binary(_ program: ConnectionsProgram) -> URL? {
        switch program {
        case .lesson: executables.appendingPathComponent(LessonID.segmented.executable)
        case .aria2c: References.which("aria2c")
        case .curl: References.which("curl")
        }
    }

    private func once(_ program: ConnectionsProgram, binary: URL, connections count: Int, fixture: Fixture,
                      from peer: ConnectionsServer, url address: URL, token: String, pace: Int64) throws -> ComparisonResults.ConnectionsRun {
        let url = address.absoluteString
        let size = fixture.size
        let folder = workFolder.appendingPathComponent("\(token)-\(program.rawValue)-\(count)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent(fixture.name)
        let arguments: [String] = switch program {
        case .lesson: ["--url", url, "--output", file.path, "--connections", String(count), "--sha256", digests.sha256(of: fixture), "--quiet"]
        // aria2c checks the file's SHA-256 at the end too, as the lesson does: the same work.
        case .aria2c: ["--quiet", "--max-connection-per-server=\(count)", "--split=\(count)", "--min-split-size=1M",
                       "--checksum=sha-256=\(digests.sha256(of: fixture))", "--allow-overwrite=true", "--dir", folder.path, "--out", fixture.name, url]
        case .curl: ["-sS", "-o", file.path, url]
        }
        let finished = try MeasuredProcess(program: binary, arguments: arguments, outputFolder: folder).run()
        guard finished.exitCode == 0, (try? FileDigest.sha256Hex(of: file)) == digests.sha256(of: fixture) else {
            throw CompareError("\(program.rawValue) on \(count) connection\(count == 1 ? "" : "s") did not fetch \(url): "
                + (finished.stderr.split(separator: "\n").last.map(String.init) ?? "wrong bytes"))
        }
        let sent = peer == .lab ? server.requests(run: token, method: .get).reduce(0) { $0 + $1.bodyBytesSent } : nil
        return ComparisonResults.ConnectionsRun(program: program, server: peer, connections: count, sizeBytes: size, paceBytesPerSecond: pace,
                                                wallSeconds: finished.wallSeconds, peakRSSBytes: finished.peakRSSBytes,
                                                fetchedTwiceBytes: sent.map { max(0, $0 - size) })
    }
}
