import Foundation
import Testing

/// The playgrounds are opened in Xcode; here they are at least type-checked, so they never rot.
struct PlaygroundTests {
    static let playgrounds: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Playgrounds")

    static var sources: [URL] {
        let bundles = (try? FileManager.default.contentsOfDirectory(at: playgrounds, includingPropertiesForKeys: nil)) ?? []
        return bundles.filter { $0.pathExtension == "playground" }
            .map { $0.appendingPathComponent("Contents.swift") }
            .sorted { $0.path < $1.path }
    }

    @Test func thereIsAPlaygroundForLesson03() {
        #expect(Self.sources.map { $0.deletingLastPathComponent().lastPathComponent }.contains("03-OutputStream.playground"))
    }

    @Test(arguments: sources)
    func typeChecks(source: URL) throws {
        let swiftc = try #require(executable(named: "swiftc"), "swiftc is not on PATH")
        let finished = try ChildProcess.runProgram(swiftc, ["-typecheck", "-swift-version", "6", source.path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stderr.isEmpty, "\(finished.stderr)")
    }
}
