import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabServer

/// A lesson's strategy: one object per run, like the article's view controller.
public protocol LessonDownload: AnyObject {
    /// One press of "Start" (or "Resume"): returns when this attempt has finished or failed.
    func downloadFile() -> AttemptResult
}

/// What a lesson's code gets from the lab: where to download from and to, and how to report.
public struct LessonRun {
    public let url: URL
    public let file: URL
    public let variant: Variant
    public let progress: ProgressBar
    let console: Console

    /// The lesson's own remarks, in place of the article's NSLog.
    public func log(_ message: String) { console.line("  " + message) }
}

/// Everything around a lesson's strategy: the command line, the embedded server, the story of
/// the HTTP exchange, retries, verification, the summary and the JSON record.
public struct Lesson {
    public let id: String
    public let title: String
    public let defaultSize: Int64
    public let defaultFaults: String

    /// - Parameters:
    ///   - id: "03-outputstream"; the executable is `lesson-<id>`.
    ///   - defaultSize: the embedded server's file size when `--size` is not given.
    ///   - defaultFaults: the embedded server's fault script when `--faults` is not given.
    public init(id: String, title: String, defaultSize: Int64, defaultFaults: String) {
        self.id = id
        self.title = title
        self.defaultSize = defaultSize
        self.defaultFaults = defaultFaults
    }

    var command: String { "lesson-\(id)" }

    /// Runs the lesson and exits with an `ExitStatus`.
    public func run(_ makeDownload: (LessonRun) -> any LessonDownload) -> Never {
        let options = parseOptions()
        let console = Console(storyToStandardError: options.json, quiet: options.quiet)
        do {
            let result = try LessonSession(lesson: self, options: options, console: console).run(makeDownload)
            exit(result.exitCode)
        } catch {
            Console.error("\(command): \(describe(error))")
            // Local file errors are DownloadErrors; anything else here means the server could
            // not be started or reached.
            exit((error as? DownloadError)?.exitStatus.rawValue ?? ExitStatus.transferFailed.rawValue)
        }
    }

    /// Parses the command line. Bad input gets one line on stderr and exit 64, not a usage dump.
    private func parseOptions() -> LessonOptions {
        do {
            return try LessonOptions.parse()
        } catch {
            LessonOptions.exitReportingOneLine(error, command: command) {
                "\(command): \(title)\n\n"
                    + LessonOptions.helpMessage().replacingOccurrences(of: "USAGE: lesson ", with: "USAGE: \(command) ")
            }
        }
    }
}
