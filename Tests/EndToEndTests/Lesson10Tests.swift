import Foundation
import LabFixtures
import LabServer
import LabVocabulary
import Testing

/// lesson-10-conditional-get, run as a child process: its two launches, where each variant keeps
/// the file, what the second launch asks, against the lab server and against nginx. Whether
/// each article defect shows, and each fix holds, is the catalogue's trials' to say (ExerciseTests).
@Suite(.serialized)
final class Lesson10Tests {
    static let lesson = LessonID.conditionalGet.executable
    private let bench: TestBench

    init() throws { bench = try TestBench() }

    /// Both launches of one run into a container of its own.
    private func run(_ variant: Variant, _ url: URL, container: URL, extra: [String] = []) throws -> ChildProcess.Finished {
        try ChildProcess.run(Self.lesson, ["--url", url.absoluteString, "--output", container.path,
                                               "--variant", variant.rawValue, "--json"] + extra)
    }

    @Test(arguments: Variant.allCases)
    func aChangedFileIsFetchedAndAnUnchangedOneIsNot(variant: Variant) throws {
        let fixture = Fixture(name: "conditional.bin", size: 1 << 20)
        let changed = Fixture(name: fixture.name, size: fixture.size, generation: 1)
        for faults in ["ok,change", ""] {
            let container = bench.directory.appendingPathComponent("\(variant)-\(faults.isEmpty ? "same" : "changed")")
            let url = bench.server.url(for: fixture, faults: faults.isEmpty ? nil : faults, run: UUID().uuidString)
            // The server's file as the second launch finds it: --sha256 states what must be there.
            let current = faults.isEmpty ? fixture : changed
            let finished = try run(variant, url, container: container, extra: ["--sha256", current.sha256Hex()])
            let result = try finished.result()
            #expect(finished.stderr.contains("↻ launch 2: the app starts again"), "\(finished.stderr)")
            // The second launch is an event of the record, between the two launches' requests.
            let launch = try #require(result.events?.first)
            #expect(result.events?.map(\.what) == ["launch 2"])
            #expect(result.requests.first.flatMap(\.endedAt).map { $0 <= launch.at } == true)
            #expect(result.requests.last.flatMap(\.startedAt).map { $0 >= launch.at } == true)
            let folder = variant == .article ? "Library/Caches" : "Library/Application Support"
            #expect(result.output == container.appendingPathComponent("\(folder)/\(fixture.name)").path)
            let requests = result.requests.map { "\($0.method.rawValue) \($0.status ?? 0)" }
            switch (variant, faults.isEmpty) {
            case (.article, false):
                // Same size, so "already downloaded": the old file stays, and the digest says so.
                #expect(finished.status == ExitStatus.verificationFailed.rawValue)
                #expect(requests == ["HEAD 200", "GET 200", "HEAD 200"])
                #expect(finished.stderr.contains("already downloaded"))
                #expect(result.actualSHA256 == fixture.sha256Hex())
            case (.article, true):
                #expect(finished.status == 0, "\(finished.stderr)")
                #expect(requests == ["HEAD 200", "GET 200", "HEAD 200"])
            case (.corrected, _):
                #expect(finished.status == 0, "\(finished.stderr)")
                #expect(requests == ["GET 200", faults.isEmpty ? "GET 304" : "GET 200"])
                let (first, second) = (result.requests[0], result.requests[1])
                #expect(first.ifNoneMatch == nil && first.ifModifiedSince == nil)
                #expect(second.ifNoneMatch == first.etag && second.ifModifiedSince != nil)
                #expect(result.bytesReceived == fixture.size * (faults.isEmpty ? 1 : 2))
                // A changed file fetched again is not one version downloaded twice.
                #expect(finished.stderr.contains("downloaded twice  0 bytes"), "\(finished.stderr)")
                // The validators beside the file are the current version's.
                let kept = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: result.output + ".validators"))) as? [String: Any]
                #expect(kept?["entityTag"] as? String == result.requests.last { $0.status == 200 }?.etag)
                #expect((kept?["length"] as? NSNumber)?.int64Value == fixture.size)
            }
        }
    }

    @Test func purgedCachesCostTheArticleTheWholeFile() throws {
        let fixture = Fixture(name: "purged.bin", size: 1 << 20)
        for variant in Variant.allCases {
            let container = bench.directory.appendingPathComponent("purged-\(variant)")
            let finished = try run(variant, bench.server.url(for: fixture, run: UUID().uuidString), container: container,
                                   extra: ["--purge-caches", "--sha256", fixture.sha256Hex()])
            #expect(finished.status == 0, "\(finished.stderr)")
            #expect(finished.stderr.contains("after the system emptied Library/Caches"))
            let result = try finished.result()
            #expect(result.bytesReceived == fixture.size * (variant == .article ? 2 : 1))
        }
    }

    /// nginx's own ETag and Last-Modified: the second launch gets its 304; a container whose
    /// validators keep only the date asks with If-Modified-Since alone, and gets one too.
    @Test(.enabled(if: runningInCI || executable(named: "nginx") != nil,
                   "nginx is not installed; the real-peer test is skipped (apt-get install nginx)"))
    func nginxAnswersTheSecondLaunchWithA304ForTheTagAndForTheDate() throws {
        let nginx = try Nginx(rate: "0")
        let fixture = Fixture(name: "nginx.bin", size: 1 << 20)
        try fixture.write(to: nginx.root.appendingPathComponent(fixture.name))
        let url = try #require(URL(string: nginx.url(fixture.name)))
        let container = bench.directory.appendingPathComponent("nginx")
        let first = try run(.corrected, url, container: container, extra: ["--sha256", fixture.sha256Hex()])
        #expect(first.status == 0, "\(first.stderr)")
        let result = try first.result()
        #expect(result.requests.map(\.status) == [200, 304])
        #expect(result.bytesReceived == fixture.size)

        let validators = URL(fileURLWithPath: result.output + ".validators")
        var kept = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: validators)) as? [String: Any])
        kept["entityTag"] = nil
        try JSONSerialization.data(withJSONObject: kept).write(to: validators)
        let byDate = try run(.corrected, url, container: container, extra: ["--sha256", fixture.sha256Hex()])
        #expect(byDate.status == 0, "\(byDate.stderr)")
        let asked = try #require(try byDate.result().requests.first)
        #expect(asked.status == 304 && asked.ifNoneMatch == nil && asked.ifModifiedSince != nil)
    }

    @Test func purgeCachesIsLesson10sAlone() throws {
        let finished = try ChildProcess.run(LessonID.outputStream.executable, ["--purge-caches"])
        #expect(finished.status == ExitStatus.usage.rawValue)
        #expect(finished.stderr == "lesson-03-outputstream: --purge-caches is lesson 10's: it empties Library/Caches between its two launches\n")
    }

    #if os(Linux)
    /// Why the lesson puts the new version in place with rename(2): where Foundation does not use
    /// renameat2, replaceItemAt renames the old file onto the new one's path and then fails.
    @Test func replaceItemAtLosesTheNewFileOnLinux() throws {
        let original = bench.directory.appendingPathComponent("original")
        let replacement = bench.directory.appendingPathComponent("replacement")
        try Data("old".utf8).write(to: original)
        try Data("new".utf8).write(to: replacement)
        #expect(throws: (any Error).self) { try FileManager.default.replaceItemAt(original, withItemAt: replacement) }
        #expect(!FileManager.default.fileExists(atPath: original.path))
        #expect(try Data(contentsOf: replacement) == Data("old".utf8))
    }
    #endif
}
