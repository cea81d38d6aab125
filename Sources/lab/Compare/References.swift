import Foundation
import LabKit
import LabReport
import LabServer

/// The yardsticks measured in the same run as the lessons: the download tools a user might pick
/// instead, and the two limits no client can beat on this machine.
struct References {
    let source: FixtureSource
    let workFolder: URL
    let digests: DigestCache

    /// A program on PATH, or nil.
    static func which(_ program: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent(program) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// curl and wget (whichever are installed) save the file, like the lessons do.
    func clients(size: Int64, repetitions: Int) throws -> [ComparisonResults.Reference] {
        let fixture = Fixture(name: "compare-\(size).bin", size: size)
        var references: [ComparisonResults.Reference] = []
        for (tool, arguments) in [("curl", ["-sS", "-o"]), ("wget", ["-q", "-O"])] {
            guard let program = Self.which(tool) else { continue }
            let runs = try measure("\(tool)-\(size)", repetitions: repetitions) { folder in
                let file = folder.appendingPathComponent(fixture.name)
                let url = source.url(for: fixture, faults: nil, run: "reference-\(UUID().uuidString.prefix(8))")
                let finished = try MeasuredProcess(program: program, arguments: arguments + [file.path, url.absoluteString],
                                                   outputFolder: folder).run()
                guard finished.exitCode == 0, (try? FileDigest.sha256Hex(of: file)) == digests.sha256(of: fixture) else {
                    throw CompareError("\(tool) could not download \(url.absoluteString): \(finished.stderr.split(separator: "\n").first ?? "wrong bytes")")
                }
                return finished
            }
            references.append(reference(tool, detail: "\(tool) \(arguments.joined(separator: " ")) FILE URL", size: size, runs: runs))
        }
        return references
    }

    /// The server and loopback together: curl reads the file and throws it away.
    func loopbackLimit(size: Int64, repetitions: Int) throws -> ComparisonResults.Reference? {
        guard let curl = Self.which("curl") else { return nil }
        let fixture = Fixture(name: "compare-\(size).bin", size: size)
        let runs = try measure("loopback-\(size)", repetitions: repetitions) { folder in
            let url = source.url(for: fixture, faults: nil, run: "loopback-\(UUID().uuidString.prefix(8))")
            let finished = try MeasuredProcess(program: curl, arguments: ["-sS", "-o", "/dev/null", url.absoluteString],
                                               outputFolder: folder).run()
            guard finished.exitCode == 0 else { throw CompareError("curl could not read \(url.absoluteString)") }
            return finished
        }
        return reference("loopback-limit", detail: "curl -o /dev/null: server and loopback, no disk", size: size, runs: runs)
    }

    /// The destination's file system: dd writes the same number of bytes where the lessons
    /// write, and waits until they are on the device.
    func diskLimit(size: Int64, repetitions: Int) throws -> ComparisonResults.Reference? {
        guard let dd = Self.which("dd") else { return nil }
        let runs = try measure("disk-\(size)", repetitions: repetitions) { folder in
            let arguments = ["if=/dev/zero", "of=\(folder.appendingPathComponent("zeros").path)", "bs=1M",
                             "count=\(max(1, size >> 20))", "conv=fdatasync"]
            let finished = try MeasuredProcess(program: dd, arguments: arguments, outputFolder: folder).run()
            guard finished.exitCode == 0 else { throw CompareError("dd could not write to \(folder.path)") }
            return finished
        }
        return reference("disk-limit", detail: "dd bs=1M conv=fdatasync into the lessons' folder", size: size, runs: runs)
    }

    /// Runs `once` `repetitions` times, each in a fresh folder that is removed afterwards.
    private func measure(_ name: String, repetitions: Int,
                         _ once: (URL) throws -> MeasuredProcess.Finished) throws -> [MeasuredProcess.Finished] {
        try (0..<repetitions).map { _ in
            let folder = try freshFolder(name)
            defer { try? FileManager.default.removeItem(at: folder) }
            return try once(folder)
        }
    }

    private func reference(_ kind: String, detail: String, size: Int64,
                           runs: [MeasuredProcess.Finished]) -> ComparisonResults.Reference {
        let wall = median(runs.map(\.wallSeconds))
        return ComparisonResults.Reference(
            kind: kind, detail: detail, sizeBytes: size, wallSeconds: wall,
            throughputBytesPerSecond: Double(size) / max(wall, 1e-6),
            peakRSSBytes: median(runs.map(\.peakRSSBytes)))
    }

    private func freshFolder(_ name: String) throws -> URL {
        let folder = workFolder.appendingPathComponent("reference-\(name)")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

/// The middle value; of two middle values, the upper one, so it is always a measured value.
func median<T: Comparable>(_ values: [T]) -> T {
    values.sorted()[values.count / 2]
}
