import Foundation
import LabFixtures
import LabServer
import LabVocabulary
import Testing

@Suite("Fixture bytes and validators")
struct FixtureTests {
    @Test("any offset gives the same bytes as a fill from the start")
    func randomAccess() {
        let fixture = Fixture(name: "random-access", size: 200_000)
        let whole = expectedBytes(fixture)
        for (offset, count) in [(0, 1), (1, 7), (3, 8), (7, 9), (8, 64), (13, 70_001), (65_535, 3), (199_990, 10)] {
            #expect(byteDifference(expectedBytes(fixture, from: Int64(offset), count: count), Array(whole[offset..<offset + count])) == nil,
                    "offset \(offset) count \(count)")
        }
        // A destination that is not 8-byte aligned must work too.
        var unaligned = [UInt8](repeating: 0, count: 1_001)
        unaligned.withUnsafeMutableBytes { fixture.fill(UnsafeMutableRawBufferPointer(rebasing: $0[1...]), from: 8) }
        #expect(byteDifference(Array(unaligned[1...]), Array(whole[8..<1_008])) == nil)
    }

    @Test("a text fixture is 64-byte log lines, the same from any offset, and not the binary one")
    func textFixture() throws {
        let fixture = Fixture(name: "log", size: 200_000, content: .text)
        let whole = expectedBytes(fixture)
        for (offset, count) in [(0, 1), (1, 63), (63, 2), (64, 64), (100, 70_001), (199_990, 10)] {
            #expect(byteDifference(expectedBytes(fixture, from: Int64(offset), count: count), Array(whole[offset..<offset + count])) == nil,
                    "offset \(offset) count \(count)")
        }
        var unaligned = [UInt8](repeating: 0, count: 1_001)
        unaligned.withUnsafeMutableBytes { fixture.fill(UnsafeMutableRawBufferPointer(rebasing: $0[1...]), from: 8) }
        #expect(byteDifference(Array(unaligned[1...]), Array(whole[8..<1_008])) == nil)
        let lines = try #require(String(validating: whole.prefix(64 * 3), as: UTF8.self)).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 4 && lines[3].isEmpty)
        for (number, line) in lines.prefix(3).enumerated() {
            #expect(line.count == 63)
            #expect(line.wholeMatch(of: /[0-9a-f]{8}( [a-z]{4,6} *){4} [0-9a-f]{8} (200|206|304) OK +/) != nil, "\(line)")
            #expect(line.hasPrefix(String(format: "%08x ", number)))
        }
        #expect(whole != expectedBytes(Fixture(name: "log", size: 200_000)))
        #expect(whole != expectedBytes(Fixture(name: "log", size: 200_000, generation: 1, content: .text)))
        #expect(fixture.etag != Fixture(name: "log", size: 200_000).etag)
        #expect(fixture.sha256Hex() == oneShotSHA256Hex(whole))
    }

    @Test("bytes depend on name and generation, and are pinned across versions")
    func bytesAreDeterministic() {
        let base = expectedBytes(Fixture(name: "a", size: 64))
        #expect(byteDifference(base, expectedBytes(Fixture(name: "a", size: 64))) == nil)
        #expect(base == expectedBytes(Fixture(name: "a", size: 1 << 30), count: 64), "size must not change the bytes")
        #expect(base != expectedBytes(Fixture(name: "b", size: 64)))
        #expect(base != expectedBytes(Fixture(name: "a", size: 64, generation: 1)))
        // Downloads resumed across lab versions rely on these exact values.
        #expect(base.prefix(8).map { String(format: "%02x", $0) }.joined() == GoldenValues.firstBytesOfA)
        #expect(Fixture(name: "a", size: 1 << 20).etag == GoldenValues.etagOfA)
    }

    @Test("ETag and Last-Modified identify name, size and generation")
    func validators() {
        let fixture = Fixture(name: "v", size: 1000)
        #expect(fixture.etag.wholeMatch(of: /"[0-9a-f]{16}"/) != nil)
        #expect(fixture.etag == Fixture(name: "v", size: 1000).etag)
        #expect(fixture.etag != Fixture(name: "v", size: 1001).etag)
        #expect(fixture.etag != Fixture(name: "w", size: 1000).etag)
        #expect(fixture.etag != Fixture(name: "v", size: 1000, generation: 1).etag)
        #expect(fixture.lastModified == "Mon, 01 Jan 2024 00:00:00 GMT")
        #expect(Fixture(name: "v", size: 1000, generation: 1).lastModified == "Mon, 01 Jan 2024 01:00:00 GMT")
        #expect(Fixture(name: "v", size: 1000, generation: 25).lastModified == "Tue, 02 Jan 2024 01:00:00 GMT")
    }

    @Test("sha256Hex matches an independent SHA-256 of the bytes")
    func sha256MatchesReference() {
        for fixture in [Fixture(name: "digest", size: 1_000_003), Fixture(name: "digest", size: 1_000_003, generation: 2),
                        Fixture(name: "empty", size: 0)] {
            #expect(fixture.sha256Hex() == oneShotSHA256Hex(expectedBytes(fixture)))
        }
        #expect(Fixture(name: "empty", size: 0).sha256Hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}

enum GoldenValues {
    static let firstBytesOfA = "ac33fe663ebc70ed"
    static let etagOfA = #""40de9dbeaeae3521""#
}

@Suite("What the server remembers of fixtures")
struct FixtureMemoTests {
    /// A client naming ever new fixtures cannot grow the server's memory without end: past its
    /// capacity the memo starts afresh, and what it keeps is still right.
    @Test func forgetsEverythingOnceFull() {
        let memo = FixtureMemo<Int64>(capacity: 3)
        let fixtures = (0..<7).map { Fixture(name: "f\($0)", size: 100) }
        for (index, fixture) in fixtures.enumerated() {
            memo.remember(Int64(index), for: fixture)
            #expect(memo.count <= 3)
            #expect(memo[fixture] == Int64(index))
        }
        #expect(memo[fixtures[0]] == nil)
        // Remembering a known fixture again never empties it.
        memo.remember(60, for: fixtures[6])
        #expect(memo[fixtures[6]] == 60 && memo.count == 1)
    }

    /// Digests of many fixtures, each asked for once: the digest memo stays within its capacity.
    @Test func digestsOfManyFixturesStayBounded() {
        for index in 0..<(Fixture.digestCache.capacity + 50) {
            _ = Fixture(name: "many-\(index)", size: 16).sha256Hex()
        }
        #expect(Fixture.digestCache.count <= Fixture.digestCache.capacity)
    }
}
