import Foundation
import LabFixtures
import LabServer
import LabVocabulary

/// Writes the first `prefix` bytes of `fixture` to `file`.
func writeFixture(_ fixture: Fixture, prefix: Int64, to file: URL) throws {
    _ = FileManager.default.createFile(atPath: file.path, contents: nil)
    let handle = try FileHandle(forWritingTo: file)
    defer { try? handle.close() }
    var offset: Int64 = 0
    var buffer = Data(count: 1 << 20)
    while offset < prefix {
        let count = Int(min(Int64(buffer.count), prefix - offset))
        buffer.withUnsafeMutableBytes { fixture.fill(UnsafeMutableRawBufferPointer(rebasing: $0[0..<count]), from: offset) }
        try handle.write(contentsOf: buffer.prefix(count))
        offset += Int64(count)
    }
}
