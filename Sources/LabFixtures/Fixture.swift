import Foundation
import LabVocabulary

/// A downloadable file that is never stored anywhere: its bytes are computed on demand
/// from `name` and `generation`, so a 64 GiB fixture costs no disk and no memory.
///
/// Everything a client can observe (bytes, ETag, Last-Modified, digest) depends only on
/// `name`, `size` and `generation`, so two server runs agree and resumed downloads can be
/// validated across restarts.
public struct Fixture: Hashable, Sendable {
    /// The largest fixture the lab serves or sends.
    public static let maximumSize = ByteSize.largestFixture

    public let name: String
    public let size: Int64
    /// Bumped by the `change` fault: same name and size, different content.
    public let generation: Int
    /// Random bytes, or compressible lines of text (for the `gzip` fault).
    public let content: FixtureContent

    public init(name: String, size: Int64, generation: Int = 0, content: FixtureContent = .binary) {
        precondition(size >= 0, "a fixture cannot have a negative size")
        precondition(generation >= 0, "a fixture generation starts at 0")
        self.name = name
        self.size = size
        self.generation = generation
        self.content = content
    }

    /// Fixture names are safe as a single URL path segment and as a file name.
    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                     UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default:
                    false
                }
            }
    }

    /// A strong validator: it must change whenever the bytes change, so it covers every identity
    /// field (generation and content give new bytes, size gives a different representation).
    public var etag: String {
        let tag = FixtureBytes.mix(seed ^ FixtureBytes.mix(UInt64(size)) ^ (content == .text ? 0x7465_7874 : 0))
        let hex = String(tag, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// Each generation is one hour "newer" than the previous one, starting at 2024-01-01,
    /// so a changed entity also fails an If-Range date comparison.
    public var lastModified: String { Self.lastModified(ofGeneration: generation) }

    public static func lastModified(ofGeneration generation: Int) -> String {
        HTTPDate.format(secondsSince1970: HTTPDate.epochOfGenerationZero + Int64(generation) * 3600)
    }

    /// Writes the fixture bytes at `offset ..< offset + buffer.count` into `buffer`.
    /// Any offset is equally cheap, which is what makes Range requests free to serve.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int64) {
        switch content {
        case .binary: FixtureBytes(seed: seed).fill(buffer, from: offset)
        case .text: FixtureText(seed: seed).fill(buffer, from: offset)
        }
    }

    /// Writes the whole fixture to `file` (replacing it), 1 MiB at a time: for a static server
    /// to serve the same bytes, or for a client to send. The error is one line, the reason only.
    public func write(to file: URL) throws {
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
              let handle = FileHandle(forWritingAtPath: file.path)
        else { throw LabError("cannot create the file") }
        defer { try? handle.close() }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: Int64 = 0
        while offset < size {
            let count = Int(min(Int64(buffer.count), size - offset))
            buffer.withUnsafeMutableBytes { fill(UnsafeMutableRawBufferPointer(rebasing: $0[..<count]), from: offset) }
            do {
                try handle.write(contentsOf: buffer[..<count])
            } catch {
                throw LabError(systemReason(of: error))
            }
            offset += Int64(count)
        }
    }

    var seed: UInt64 {
        FixtureBytes.seed(name: name, generation: generation)
    }
}
