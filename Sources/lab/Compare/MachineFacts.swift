import Foundation
import LabFixtures
import LabPlatform
import LabReport
import LabVocabulary

/// What the report says about the machine, so numbers from different machines can be told apart.
enum MachineFacts {
    static func environment(source: FixtureSource, startedAt: Date, duration: Double) -> ComparisonResults.Environment {
        ComparisonResults.Environment(
            hostname: ProcessInfo.processInfo.hostName,
            cpuModel: cpuModel(),
            cores: ProcessInfo.processInfo.activeProcessorCount,
            memoryBytes: Int64(ProcessInfo.processInfo.physicalMemory),
            operatingSystem: operatingSystem(),
            swiftVersion: swiftVersion(),
            buildConfiguration: buildConfiguration,
            serverKind: source.kind,
            serverURL: source.baseURL.absoluteString,
            startedAt: ISO8601DateFormatter().string(from: startedAt),
            durationSeconds: duration)
    }

    /// Debug builds are what `swift run` makes; they are slower, which the report says.
    static var buildConfiguration: BuildConfiguration {
        #if DEBUG
        .debug
        #else
        .release
        #endif
    }

    static func cpuModel() -> String { Platform.cpuModel() ?? "unknown" }

    static func operatingSystem() -> String {
        let release = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8)) ?? ""
        let pretty = release.split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        // Foundation's operatingSystemVersionString is that same pretty name on Linux; the
        // kernel comes from uname.
        var names = utsname()
        let kernel = uname(&names) == 0
            ? withUnsafeBytes(of: names.release) { "Linux " + String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } : nil
        return [pretty, kernel].compactMap { $0 }.joined(separator: ", ")
    }

    /// The toolchain on PATH, which is the one `swift run` built this with.
    static func swiftVersion() -> String {
        guard let swift = References.which("swift") else { return "unknown" }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lab-swift-version-\(getpid())")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        guard let finished = try? MeasuredProcess(program: swift, arguments: ["--version"], outputFolder: folder).run(),
              let line = (finished.stdout + finished.stderr).split(separator: "\n").first(where: { $0.contains("Swift version") }),
              let range = line.range(of: #"Swift version [0-9][^ ]*"#, options: .regularExpression)
        else { return "unknown" }
        return String(line[range].dropFirst("Swift version ".count))
    }
}
