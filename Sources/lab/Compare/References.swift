import Foundation
import LabFixtures
import LabHarness
import LabKit
import LabReport
import LabServer
import LabVocabulary

/// The yardsticks measured in the same run as the lessons: the download tools a user might pick
/// instead, Foundation's own floor, curl sending what lesson 07 sends, and the two limits no
/// client can beat on this machine.
struct References {
    let source: FixtureSource
    let workFolder: URL
    let digests: DigestCache
    /// `foundation-floor`, built next to `lab`.
    let foundationFloor: URL

    /// The references that a lesson's own run is paired with.
    enum Paired {
        case foundationFloor
        case formUpload

        var kind: ReferenceKind {
            switch self {
            case .foundationFloor: .foundationFloor
            case .formUpload: .formUpload
            }
        }
    }

    /// A program on PATH, or nil.
    /// nginx, which Debian keeps in /usr/sbin, off a user's PATH.
    static var nginx: URL? {
        which("nginx") ?? ["/usr/sbin/nginx", "/usr/local/sbin/nginx"].map(URL.init(fileURLWithPath:))
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    static func which(_ program: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":")
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent(program) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Clients that save the file, like the lessons do: curl and wget (whichever are installed),
    /// and Foundation's floor, a bare URLSession data delegate that writes each chunk to a
    /// FileHandle and does nothing else. None of them reads the file back to verify it; the
    /// lessons' verification is timed on its own (`verificationSeconds`).
    func clients(size: Int64, repetitions: Int) throws -> [ComparisonResults.Reference] {
        let clients: [(kind: ReferenceKind, program: URL?, detail: String, arguments: (_ file: String, _ url: String) -> [String])] = [
            (.curl, Self.which("curl"), "curl -sS -o FILE URL", { ["-sS", "-o", $0, $1] }),
            (.wget, Self.which("wget"), "wget -q -O FILE URL", { ["-q", "-O", $0, $1] }),
            (.foundationFloor, foundationFloor,
             "foundation-floor URL FILE: a URLSession data delegate writes each chunk to a FileHandle, nothing else",
             { [$1, $0] }),
        ]
        var references: [ComparisonResults.Reference] = []
        for client in clients {
            guard let program = client.program else { continue }
            let runs = try measure("\(client.kind.rawValue)-\(size)", repetitions: repetitions) { folder in
                try download(with: program, named: client.kind.rawValue, arguments: client.arguments, size: size, in: folder)
            }
            references.append(reference(client.kind, detail: client.detail, size: size, runs: runs))
        }
        return references
    }

    /// One run of `kind` at `size`, for pairing with one repetition of a lesson: nil when its
    /// program is not there (curl -F without curl).
    func once(_ kind: Paired, size: Int64) throws -> MeasuredProcess.Finished? {
        switch kind {
        case .foundationFloor:
            return try measure("paired-floor-\(size)", repetitions: 1) { folder in
                try download(with: foundationFloor, named: kind.kind.rawValue, arguments: { [$1, $0] }, size: size, in: folder)
            }.first
        case .formUpload:
            guard let curl = Self.which("curl") else { return nil }
            return try measure("paired-form-\(size)", repetitions: 1) { folder in
                try formUploadOnce(with: curl, size: size, in: folder)
            }.first
        }
    }

    /// `program` saves the fixture of `size` into `folder`; its bytes are checked.
    private func download(with program: URL, named kind: String, arguments: (_ file: String, _ url: String) -> [String],
                          size: Int64, in folder: URL) throws -> MeasuredProcess.Finished {
        let fixture = Fixture(name: "compare-\(size).bin", size: size)
        let file = folder.appendingPathComponent(fixture.name)
        let url = source.url(for: fixture, faults: .none, run: "reference-\(UUID().uuidString.prefix(8))")
        let finished = try MeasuredProcess(program: program, arguments: arguments(file.path, url.absoluteString),
                                           outputFolder: folder).run()
        guard finished.exitCode == 0, (try? FileDigest.sha256Hex(of: file)) == digests.sha256(of: fixture) else {
            throw CompareError("\(kind) could not download \(url.absoluteString): \(finished.stderr.split(separator: "\n").first ?? "wrong bytes")")
        }
        return finished
    }

    /// curl sending a file of `size` bytes as multipart/form-data to `POST /upload`, as lesson 07
    /// does. The file is written before curl starts, as the lab writes lesson 07's.
    func formUpload(size: Int64, repetitions: Int) throws -> ComparisonResults.Reference? {
        guard let curl = Self.which("curl") else { return nil }
        let runs = try measure("curl-form-\(size)", repetitions: repetitions) { folder in
            try formUploadOnce(with: curl, size: size, in: folder)
        }
        return reference(.formUpload, detail: "curl -F file=@FILE URL: the same multipart upload as lesson 07",
                         size: size, runs: runs)
    }

    /// curl -F sends a file of `size` written into `folder` beforehand; the server's answer is checked.
    private func formUploadOnce(with curl: URL, size: Int64, in folder: URL) throws -> MeasuredProcess.Finished {
        let fixture = Fixture(name: "upload-\(size).bin", size: size)
        let file = folder.appendingPathComponent(fixture.name)
        try fixture.write(to: file)
        let url = source.uploadURL(run: "reference-\(UUID().uuidString.prefix(8))")
        let answer = folder.appendingPathComponent("answer.json")
        let finished = try MeasuredProcess(program: curl, arguments: ["-sS", "-o", answer.path, "-F", "file=@\(file.path)",
                                                                      url.absoluteString],
                                           outputFolder: folder).run()
        let received = (try? JSONDecoder().decode(UploadAnswer.self, from: Data(contentsOf: answer)))?.files.first
        guard finished.exitCode == 0, received?.sha256 == fixture.sha256Hex(), received?.bytes == size else {
            throw CompareError("curl -F could not upload to \(url.absoluteString): \(finished.stderr.split(separator: "\n").first ?? "the server received other bytes")")
        }
        return finished
    }

    /// The server and loopback together: curl reads the file and throws it away.
    func loopbackLimit(size: Int64, repetitions: Int) throws -> ComparisonResults.Reference? {
        guard let curl = Self.which("curl") else { return nil }
        let fixture = Fixture(name: "compare-\(size).bin", size: size)
        let runs = try measure("loopback-\(size)", repetitions: repetitions) { folder in
            let url = source.url(for: fixture, faults: .none, run: "loopback-\(UUID().uuidString.prefix(8))")
            let finished = try MeasuredProcess(program: curl, arguments: ["-sS", "-o", "/dev/null", url.absoluteString],
                                               outputFolder: folder).run()
            guard finished.exitCode == 0 else { throw CompareError("curl could not read \(url.absoluteString)") }
            return finished
        }
        return reference(.loopbackLimit, detail: "curl -o /dev/null: server and loopback, no disk", size: size, runs: runs)
    }

    /// The destination's file system: `foundation-floor --write` writes the same number of bytes
    /// where the lessons write, in 1 MiB writes, and waits until they are on the device. The
    /// lab's own program rather than dd, whose options differ between GNU and Apple's systems.
    func diskLimit(size: Int64, repetitions: Int) throws -> ComparisonResults.Reference {
        let runs = try measure("disk-\(size)", repetitions: repetitions) { folder in
            let file = folder.appendingPathComponent("zeros")
            let finished = try MeasuredProcess(program: foundationFloor, arguments: ["--write", file.path, String(size)],
                                               outputFolder: folder).run()
            guard finished.exitCode == 0, PartialFile.size(of: file) == size else {
                throw CompareError("foundation-floor could not write \(size) bytes to \(folder.path): "
                    + (finished.stderr.split(separator: "\n").first.map(String.init) ?? "the file has another size"))
            }
            return finished
        }
        return reference(.diskLimit, detail: "foundation-floor --write FILE: 1 MiB writes through a FileHandle, then synchronize(), "
            + "into the lessons' folder", size: size, runs: runs)
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

    private func reference(_ kind: ReferenceKind, detail: String, size: Int64,
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
