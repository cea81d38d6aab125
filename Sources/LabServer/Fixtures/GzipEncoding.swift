import CompressNIO
import Foundation
import LabFixtures
import NIOCore

/// A fixture as the `gzip` fault sends it: zlib's gzip format at level 1 (nginx's default
/// `gzip_comp_level`), fed a segment of 256 KiB at a time, each ending in a sync flush. Fixed
/// segments make the encoding the same bytes every time, so the length measured off the event
/// loop (`GzipSizer`) is the length of the body sent later on it (`GzipStream`).
final class GzipEncoding {
    static let segmentBytes: Int64 = 256 << 10

    let fixture: Fixture
    private let compressor: ZlibCompressor
    private var nextOffset: Int64 = 0
    private(set) var isFinished = false
    private var segment = ByteBuffer()

    init(_ fixture: Fixture) throws {
        self.fixture = fixture
        compressor = try ZlibCompressor(algorithm: .gzip, configuration: ZlibConfiguration(compressionLevel: 1))
    }

    /// The fixture's bytes read so far.
    var decodedBytes: Int64 { nextOffset }

    /// The encoding of the next segment; the last one also carries gzip's trailer.
    func nextSegment(allocator: ByteBufferAllocator) throws -> ByteBuffer {
        precondition(!isFinished, "the encoding has ended")
        let count = Int(min(Self.segmentBytes, fixture.size - nextOffset))
        segment.clear()
        segment.writeWithUnsafeMutableBytes(minimumWritableBytes: count) { space in
            fixture.fill(UnsafeMutableRawBufferPointer(rebasing: space[0..<count]), from: nextOffset)
            return count
        }
        nextOffset += Int64(count)
        let isLast = nextOffset == fixture.size
        let encoded = try segment.compressStream(with: compressor, flush: isLast ? .finish : .sync, allocator: allocator)
        isFinished = isLast
        return encoded
    }
}

/// Why a fixture could not be compressed (zlib ran out of memory): one line.
struct GzipFailure: Error, Sendable, CustomStringConvertible {
    let description: String
}

/// The length of a fixture's gzip encoding, measured by encoding it once, a slice at a time.
final class GzipSizer: FixtureComputation, @unchecked Sendable {
    // @unchecked: zlib's stream is not Sendable. `FixtureWork` hands the sizer to one thread at a
    // time (a computation is queued again only after its slice has returned).
    let fixture: Fixture
    private var encoding: Result<GzipEncoding, GzipFailure>
    private var length: Int64 = 0
    private let allocator = ByteBufferAllocator()

    init(_ fixture: Fixture) {
        self.fixture = fixture
        encoding = Result { try GzipEncoding(fixture) }.mapError { GzipFailure(description: "cannot start gzip: \($0)") }
    }

    func advance(by bytes: Int64) -> Result<Int64, GzipFailure>? {
        let encoding: GzipEncoding
        switch self.encoding {
        case .failure(let failure): return .failure(failure)
        case .success(let started): encoding = started
        }
        let end = encoding.decodedBytes + bytes
        do {
            while !encoding.isFinished && encoding.decodedBytes < end {
                length += Int64(try encoding.nextSegment(allocator: allocator).readableBytes)
            }
        } catch {
            return .failure(GzipFailure(description: "cannot compress: \(error)"))
        }
        guard encoding.isFinished else { return nil }
        Self.lengths.remember(length, for: fixture)
        return .success(length)
    }

    static func known(for fixture: Fixture) -> Result<Int64, GzipFailure>? {
        lengths[fixture].map { .success($0) }
    }

    static let lengths = FixtureMemo<Int64>()
}

/// The compressed body of one response, produced as it is sent: at most a segment's encoding
/// waits in memory.
final class GzipStream {
    private let encoding: GzipEncoding
    private var pending = ByteBuffer()

    init(_ fixture: Fixture) throws {
        encoding = try GzipEncoding(fixture)
    }

    /// The next `count` bytes of the encoding, fewer only at its end.
    func read(_ count: Int, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        while pending.readableBytes < count && !encoding.isFinished {
            var segment = try encoding.nextSegment(allocator: allocator)
            pending.discardReadBytes()
            pending.writeBuffer(&segment)
        }
        return pending.readSlice(length: min(count, pending.readableBytes)) ?? ByteBuffer()
    }
}

/// Whether a request's `Accept-Encoding` allows gzip (RFC 9110, 12.5.3): `gzip` or `x-gzip` (the
/// same coding) with a weight above 0, or else `*` with one. No header at all means "no
/// preference", and nginx then sends identity; so does the lab.
enum AcceptEncoding {
    static func allowsGzip(_ values: [String]) -> Bool {
        var named: Bool?
        var wildcard: Bool?
        for item in values.joined(separator: ",").split(separator: ",") {
            let parameters = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let coding = parameters.first, !coding.isEmpty else { continue }
            let weight = parameters.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            switch coding {
            // Either name with a weight allows it, whatever the other says: `x-gzip;q=0, gzip`.
            case "gzip", "x-gzip": named = (named ?? false) || weight > 0
            case "*": wildcard = weight > 0
            default: continue
            }
        }
        return named ?? wildcard ?? false
    }
}
