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

    static func operatingSystem() -> String { Platform.operatingSystem() }

    /// The toolchain on PATH, which is the one `swift run` built this with.
    static func swiftVersion() -> String { SwiftToolchain.version() ?? "unknown" }
}
