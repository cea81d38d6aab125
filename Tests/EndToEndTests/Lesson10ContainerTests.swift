import Foundation
import LabFixtures
import LabPlatform
import LabServer
import LabVocabulary
import Testing

/// lesson-10-conditional-get's container is the lab's own: a file name a server chooses stays in
/// it, a link planted for one of its folders is refused, validators that do not fit the file are
/// set aside, and neither variant keeps a server's cookies outside the run's folders.
@Suite(.serialized)
final class Lesson10ContainerTests {
    static let lesson = LessonID.conditionalGet.executable
    private let bench: TestBench

    init() throws { bench = try TestBench() }

    private func run(_ variant: Variant, _ url: String, container: URL, extra: [String] = [],
                     environment: [String: String] = [:]) throws -> ChildProcess.Finished {
        let child = try ChildProcess(Self.lesson, ["--url", url, "--output", container.path, "--variant", variant.rawValue,
                                                   "--json"] + extra)
        child.process.environment?.merge(environment) { $1 }
        try child.start()
        return child.wait(timeout: 120)
    }

    /// `../` spelt every way a URL can, a lone `/`, a leading `/`, NUL and an empty name: the file
    /// is saved inside the folder it belongs in, and the canary beside the container is untouched.
    @Test(arguments: ["%2E%2E%2F%2E%2E%2F%2E%2E%2F%2E%2E%2Foutside%2Fvictim", "..%2F..%2F..%2F..%2Foutside%2Fvictim",
                      "%2F", "%2Foutside%2Fvictim", "a%00b", "", "x.validators"])
    func aServerChosenNameStaysInTheContainer(path: String) throws {
        let fixture = Fixture(name: "named.bin", size: 64 << 10)
        let server = try AnyPathServer(fixture: fixture)
        defer { server.stop() }
        let outside = bench.directory.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let victim = outside.appendingPathComponent("victim")
        try Data("canary".utf8).write(to: victim)
        for variant in Variant.allCases {
            let container = bench.directory.appendingPathComponent("runs/p/\(variant)")
            let finished = try run(variant, "http://127.0.0.1:\(server.port)/\(path)", container: container,
                                   extra: ["--sha256", fixture.sha256Hex()])
            let result = try finished.result()
            let folder = container.appendingPathComponent(variant == .article ? "Library/Caches" : "Library/Application Support")
            let saved = URL(fileURLWithPath: result.output)
            #expect(saved.deletingLastPathComponent().standardizedFileURL.path == folder.standardizedFileURL.path, "\(variant): \(result.output)")
            if variant == .corrected { #expect(!saved.lastPathComponent.hasSuffix(".validators"), "saved over its own validators") }
            #expect(result.verified, "\(variant): \(finished.stderr)")
            #expect(try Data(contentsOf: victim) == Data("canary".utf8))
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == ["victim"])
        }
    }

    /// A link in place of the container or any folder of it: exit 74, one line, nothing written
    /// where it points.
    @Test(arguments: ["", "Library", "Library/Caches", "Library/Application Support", "Documents", "Library/Cookies"])
    func aLinkedFolderOfTheContainerIsRefused(folder: String) throws {
        let fixture = Fixture(name: "linked.bin", size: 64 << 10)
        let target = bench.directory.appendingPathComponent("target-\(folder.isEmpty ? "container" : folder.replacingOccurrences(of: "/", with: "-"))")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        let container = bench.directory.appendingPathComponent("linked-\(target.lastPathComponent)")
        let link = folder.isEmpty ? container : container.appendingPathComponent(folder)
        try FileManager.default.createDirectory(at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        for variant in Variant.allCases {
            let finished = try run(variant, bench.server.url(for: fixture, run: UUID().uuidString).absoluteString, container: container)
            #expect(finished.status == ExitStatus.localIOFailed.rawValue, "\(variant): \(finished.stderr)")
            #expect(finished.stderr.hasSuffix("\(Self.lesson): cannot write \(link.path): it is a symbolic link; this lesson writes only into folders of its own\n"),
                    "\(finished.stderr)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty)
        }
    }

    /// Validators that do not fit the file beside them (another length, a value no header can
    /// carry, not JSON, too long to be validators, a folder) are set aside with one line, and the
    /// launch downloads the file again instead of trusting them.
    @Test(arguments: ["truncated", "control", "garbage", "huge", "folder"])
    func validatorsThatDoNotFitTheFileAreSetAside(planted: String) throws {
        let fixture = Fixture(name: "kept.bin", size: 256 << 10)
        let container = bench.directory.appendingPathComponent("kept-\(planted)")
        let url = bench.server.url(for: fixture, run: UUID().uuidString).absoluteString
        let first = try run(.corrected, url, container: container, extra: ["--sha256", fixture.sha256Hex()])
        try #require(first.status == 0, "\(first.stderr)")
        let file = URL(fileURLWithPath: try first.result().output)
        let validators = URL(fileURLWithPath: file.path + ".validators")
        switch planted {
        case "truncated": try FileHandle(forWritingTo: file).truncate(atOffset: UInt64(fixture.size / 2))
        case "control":
            try Data(#"{"entityTag":"\"x\"\r\nX-Injected: 1","length":262144}"#.utf8).write(to: validators)
        case "garbage": try Data("not json".utf8).write(to: validators)
        case "huge": try Data(repeating: 0x20, count: 1 << 20).write(to: validators)
        default:
            try FileManager.default.removeItem(at: validators)
            try FileManager.default.createDirectory(at: validators, withIntermediateDirectories: false)
        }
        let second = try run(.corrected, url, container: container, extra: ["--sha256", fixture.sha256Hex()])
        #expect(second.stderr.contains("kept.bin.validators does not fit kept.bin ("), "\(second.stderr)")
        let asked = try second.result().requests.filter { $0.method == .get }
        // The second run's first launch asks with no validator, and gets the whole file.
        #expect(asked.first?.ifNoneMatch == nil && asked.first?.status == 200, "\(asked)")
        #expect(second.status == 0, "\(second.stderr)")
    }

    /// A server's persistent cookie stays in the run's container: HOME is never written, and a
    /// later run with another container sends no cookie to another server.
    @Test func aServersCookiesStayInTheRun() throws {
        let fixture = Fixture(name: "cookies.bin", size: 64 << 10)
        let setter = try AnyPathServer(fixture: fixture, extraHeaders: ["Set-Cookie: session=abc; Expires=Fri, 01 Jan 2100 00:00:00 GMT; Path=/"])
        defer { setter.stop() }
        let other = try AnyPathServer(fixture: fixture)
        defer { other.stop() }
        let home = bench.directory.appendingPathComponent("home")
        for variant in Variant.allCases {
            let environment = ["HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
                               "XDG_CACHE_HOME": home.appendingPathComponent("cache").path]
            let first = try run(variant, "http://127.0.0.1:\(setter.port)/cookies.bin", container: bench.directory.appendingPathComponent("c1-\(variant)"),
                                environment: environment)
            #expect(first.status == 0, "\(first.stderr)")
            let second = try run(variant, "http://127.0.0.1:\(other.port)/cookies.bin", container: bench.directory.appendingPathComponent("c2-\(variant)"),
                                 environment: environment)
            #expect(second.status == 0, "\(second.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: home.path), "a lesson wrote into HOME")
        #expect(!other.requestHeads.contains { $0.lowercased().contains("\r\ncookie:") }, "\(other.requestHeads)")
        // Within one run an app's default session keeps the cookie: lesson 10's second launch sends
        // it. A Linux fact: there the seam keeps cookies in the run's folder; on a Mac it accepts none
        // (FoundationSeam.swift), so none outlives the run.
        if Platform.isLinux {
            #expect(setter.requestHeads.dropFirst().contains { $0.contains("\r\nCookie: session=abc") }, "\(setter.requestHeads)")
        }
    }
}
