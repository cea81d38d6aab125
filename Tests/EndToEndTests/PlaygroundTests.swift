import Foundation
import LabVocabulary
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

    /// Every `Sources/lesson-NN-…` has an `NN-….playground`.
    @Test func everyLessonHasAPlayground() throws {
        let sources = Self.playgrounds.deletingLastPathComponent().appendingPathComponent("Sources")
        let lessons = try FileManager.default.contentsOfDirectory(atPath: sources.path)
            .filter { $0.hasPrefix("lesson-") }
            .map { String($0.dropFirst("lesson-".count).prefix(2)) }
        let playgrounds = Set(Self.sources.map { String($0.deletingLastPathComponent().lastPathComponent.prefix(2)) })
        #expect(lessons.count >= 5)
        #expect(lessons.filter { !playgrounds.contains($0) }.isEmpty, "lessons without a playground")
    }

    @Test(arguments: sources)
    func typeChecks(source: URL) throws {
        let swiftc = try #require(executable(named: "swiftc"), "swiftc is not on PATH")
        let finished = try ChildProcess.runProgram(swiftc, ["-typecheck", "-swift-version", "6", source.path])
        #expect(finished.status == 0, "\(finished.stderr)")
        #expect(finished.stderr.isEmpty, "\(finished.stderr)")
    }
}
