import Foundation
import LabFixtures
import LabServer
import LabVocabulary
import Testing

/// lesson-11-segmented, run as a child process against the lab server: the ranges side by side,
/// a kill at a random moment and the rerun, read from the server's log. Whether each article
/// defect shows, and each fix holds, is the catalogue's trials' to say (ExerciseTests).
@Suite(.serialized)
final class Lesson11Tests {
    static let lesson = LessonID.segmented.executable
    private let bench: TestBench

    init() throws { bench = try TestBench() }

    private func gets(_ token: String) -> [LoggedRequest] {
        bench.server.requestLog.filter { $0.method == .get && $0.target.hasSuffix("run=\(token)") }
    }

    /// "bytes=5-9" → (5, 9).
    private static func bounds(_ range: String?) -> (first: Int64, last: Int64)? {
        guard let numbers = range?.dropFirst("bytes=".count).split(separator: "-"), numbers.count == 2,
              let first = Int64(numbers[0]), let last = Int64(numbers[1]) else { return nil }
        return (first, last)
    }

    /// Four ranges answered at once, each asked with If-Range and the first answer's ETag; the
    /// ranges cover the file once, and it verifies.
    @Test func theRangesGoSideBySideAndCoverTheFileOnce() throws {
        let fixture = Fixture(name: "ranges.bin", size: 8 << 20)
        let token = UUID().uuidString
        let url = bench.server.url(for: fixture, faults: "throttle:8MiB*100", run: token)
        let finished = try ChildProcess.run(Self.lesson, ["--url", url.absoluteString, "--output", bench.directory.appendingPathComponent("a.bin").path,
                                                          "--connections", "4", "--sha256", fixture.sha256Hex(), "--json"])
        #expect(finished.status == 0, "\(finished.stderr)")
        let log = gets(token)
        try #require(log.count == 5, "\(log.map { "\($0.status) \($0.range ?? "")" })")
        #expect(log[0].range == "bytes=0-1048575" && log[0].ifRange == nil)
        #expect(log.dropFirst().allSatisfy { $0.status == 206 && $0.ifRange == fixture.etag })
        let ranges = log.compactMap { Self.bounds($0.range) }.sorted { $0.first < $1.first }
        #expect(ranges.first?.first == 0 && ranges.last?.last == fixture.size - 1)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.last + 1 == $1.first })
        // At the last range's arrival, the four ranges after the first are all being answered.
        let latest = log.dropFirst().map(\.arrivedAt).max() ?? 0
        #expect(log.dropFirst().filter { $0.arrivedAt <= latest && ($0.lastBodyBytesAt ?? 0) > latest }.count == 4)
        #expect(try finished.result().bytesReceived == fixture.size)
    }

    /// Killed at a random moment and run again with the same output: each range the rerun asks
    /// for continues where the killed run's answer for it stopped, less at most 1 MiB, and the
    /// file verifies.
    @Test(arguments: [0.3, 0.7])
    func aKillAtAnyMomentResumesEachRangeWhereItStopped(share: Double) throws {
        let fixture = Fixture(name: "killed.bin", size: 16 << 20)
        let token = UUID().uuidString
        // 2 MiB/s a connection: the first MiB takes half a second, the four ranges after it about
        // two seconds, side by side; the kill lands while they are all under way.
        let url = bench.server.url(for: fixture, faults: "throttle:2MiB*100", run: token)
        let output = bench.directory.appendingPathComponent("killed-\(share).bin")
        let arguments = ["--url", url.absoluteString, "--output", output.path, "--connections", "4", "--sha256", fixture.sha256Hex(), "--json"]
        let first = try ChildProcess(Self.lesson, arguments)
        try first.start()
        usleep(useconds_t((0.6 + share * 1.4 * Double.random(in: 0.8...1.2)) * 1_000_000))
        first.kill()
        _ = first.wait()
        let killed = gets(token)
        let rerun = try ChildProcess.run(Self.lesson, arguments)
        #expect(rerun.status == 0, "\(rerun.stderr)")
        let asked = gets(token).dropFirst(killed.count)
        #expect(!asked.isEmpty, "the killed run had finished")
        #expect(!asked.contains { $0.range == "bytes=0-1048575" && killed.count > 1 }, "the rerun started over")
        for get in asked {
            let range = try #require(Self.bounds(get.range))
            // The killed run's answer for the same range: the one that ends at the same byte.
            guard let before = killed.last(where: { Self.bounds($0.range)?.last == range.last }),
                  let start = Self.bounds(before.range)?.first else { continue }
            let reached = start + before.bodyBytesSent
            #expect(range.first <= reached && reached - range.first <= 1 << 20,
                    "\(get.range ?? ""): the killed run's answer reached byte \(reached)")
        }
        #expect(!FileManager.default.fileExists(atPath: output.path + ".segments"))
    }

    /// nginx paces each connection (`limit_rate`) and allows ranges with a strong ETag: the ranges
    /// go side by side against it too, and the file verifies.
    @Test(.enabled(if: runningInCI || executable(named: "nginx") != nil, "nginx is not installed"))
    func nginxServesTheRanges() throws {
        let nginx = try Nginx(rate: "4m")
        let fixture = Fixture(name: "nginx-ranges.bin", size: 8 << 20)
        try writeFixture(fixture, prefix: fixture.size, to: nginx.root.appendingPathComponent(fixture.name))
        let url = try #require(URL(string: nginx.url(fixture.name)))
        let finished = try ChildProcess.run(Self.lesson, ["--url", url.absoluteString, "--output", bench.directory.appendingPathComponent("n.bin").path,
                                                          "--sha256", fixture.sha256Hex(), "--json"])
        #expect(finished.status == 0, "\(finished.stderr)")
        let requests = try finished.result().requests
        #expect(requests.count == 5 && requests.dropFirst().allSatisfy { $0.status == 206 && $0.ifRange == requests[0].etag })
    }
}
