import Foundation
import LabVocabulary

/// What a resumable download remembers next to its partial file: which resource the bytes came
/// from, the validator that proves it has not changed, and how long it is.
///
/// The sidecar sits at `<file>.resume.json`. It is written before the first byte is appended
/// and removed once the file is complete, so "a sidecar exists" means "this file is partial".
public struct ResumeState: Codable, Equatable, Sendable {
    public var url: String
    /// A strong ETag, or a Last-Modified date: whatever the server offered for If-Range.
    public var validator: String
    public var total: Int64

    public init(url: String, validator: String, total: Int64) {
        self.url = url
        self.validator = validator
        self.total = total
    }

    public static func sidecar(for file: URL) -> URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + ".resume.json")
    }

    /// The saved state, or nil when there is none or it cannot be read (then the partial file
    /// cannot be trusted and the download starts over).
    public static func load(for file: URL) -> ResumeState? {
        let sidecar = sidecar(for: file)
        guard OutputFile.isRegularFile(sidecar), PartialFile.size(of: sidecar) <= 64 << 10,
              let data = try? Data(contentsOf: sidecar)
        else { return nil }
        return try? JSONDecoder().decode(ResumeState.self, from: data)
    }

    public func save(for file: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(self).write(to: Self.sidecar(for: file), options: .atomic)
    }

    /// Removes the sidecar, and only a regular file: a folder of that name is not the lab's.
    public static func remove(for file: URL) {
        guard OutputFile.isRegularFile(sidecar(for: file)) else { return }
        try? FileManager.default.removeItem(at: sidecar(for: file))
    }
}
