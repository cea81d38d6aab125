import Crypto
import Foundation
import LabVocabulary

/// SHA-256 of a whole fixture, computed by streaming its bytes once and then remembered
/// (a 1 GiB fixture takes seconds to hash), for the last few thousand fixtures.
extension Fixture {
    /// Lowercase hex, as `sha256sum` prints it. Computes the digest here if it is not known yet.
    public func sha256Hex() -> String {
        if let cached = Self.cachedSHA256Digest(of: self) { return DigestText.hex(cached) }
        let hasher = FixtureHasher(self)
        while hasher.advance(by: .max) == nil {}
        return DigestText.hex(hasher.advance(by: 0)!)
    }

    package static func cachedSHA256Digest(of fixture: Fixture) -> [UInt8]? {
        digestCache[fixture]
    }

    fileprivate static func remember(_ digest: [UInt8], of fixture: Fixture) {
        digestCache.remember(digest, for: fixture)
    }

    package static let digestCache = FixtureMemo<[UInt8]>()
}

/// Hashes one fixture a slice at a time, so that the work can be shared out fairly and dropped
/// half-way. One thread at a time may call `advance(by:)`.
package final class FixtureHasher: @unchecked Sendable {
    // @unchecked: the hasher is owned by one digest computation, and `DigestWork` hands it to
    // one thread at a time (a computation is queued again only after its slice has returned).
    package let fixture: Fixture
    private var hasher = SHA256()
    private var offset: Int64 = 0
    private var digest: [UInt8]?
    private static let bufferSize = 1 << 20

    package init(_ fixture: Fixture) { self.fixture = fixture }

    /// Hashes up to `bytes` more of the fixture; returns the digest once the whole fixture is in
    /// (and remembers it for the process).
    package func advance(by bytes: Int64) -> [UInt8]? {
        if let digest { return digest }
        let end = offset + min(bytes, fixture.size - offset)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 16)
        defer { buffer.deallocate() }
        while offset < end {
            let count = Int(min(Int64(Self.bufferSize), end - offset))
            let slice = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count])
            fixture.fill(slice, from: offset)
            hasher.update(bufferPointer: UnsafeRawBufferPointer(slice))
            offset += Int64(count)
        }
        guard offset == fixture.size else { return nil }
        let finished = Array(hasher.finalize())
        digest = finished
        Fixture.remember(finished, of: fixture)
        return finished
    }
}

/// The two ways a digest is written out.
package enum DigestText {
    /// Lowercase hex, as `sha256sum` prints it.
    package static func hex(_ digest: [UInt8]) -> String {
        digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The `Repr-Digest` field value (RFC 9530): base64 of the raw digest between colons.
    package static func reprDigest(_ digest: [UInt8]) -> String {
        "sha-256=:\(Data(digest).base64EncodedString()):"
    }
}
