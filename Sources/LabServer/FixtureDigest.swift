import Crypto
import Foundation
import Synchronization

/// SHA-256 of a whole fixture, computed by streaming its bytes once and then remembered
/// for the life of the process (a 1 GiB fixture takes seconds to hash; its digest is
/// asked for on every response).
extension Fixture {
    /// Lowercase hex, as `sha256sum` prints it.
    public func sha256Hex() -> String {
        // Without a cancellation check the computation always finishes.
        DigestText.hex(sha256Digest(continueWhile: { true })!)
    }

    /// The raw 32-byte digest, or nil when `continueWhile` said stop (the server is shutting down).
    func sha256Digest(continueWhile shouldContinue: () -> Bool) -> [UInt8]? {
        if let cached = Self.digestCache.withLock({ $0[self] }) {
            return cached
        }
        var hasher = SHA256()
        let chunkSize = 1 << 20
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { chunk.deallocate() }
        var offset: Int64 = 0
        while offset < size {
            guard shouldContinue() else { return nil }
            let count = Int(min(Int64(chunkSize), size - offset))
            let slice = UnsafeMutableRawBufferPointer(rebasing: chunk[0..<count])
            fill(slice, from: offset)
            hasher.update(bufferPointer: UnsafeRawBufferPointer(slice))
            offset += Int64(count)
        }
        let digest = Array(hasher.finalize())
        Self.digestCache.withLock { $0[self] = digest }
        return digest
    }

    static func cachedSHA256Digest(of fixture: Fixture) -> [UInt8]? {
        digestCache.withLock { $0[fixture] }
    }

    private static let digestCache = Mutex<[Fixture: [UInt8]]>([:])
}

/// The two ways a digest is written out.
enum DigestText {
    /// Lowercase hex, as `sha256sum` prints it.
    static func hex(_ digest: [UInt8]) -> String {
        digest.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The `Repr-Digest` field value (RFC 9530): base64 of the raw digest between colons.
    static func reprDigest(_ digest: [UInt8]) -> String {
        "sha-256=:\(Data(digest).base64EncodedString()):"
    }
}
