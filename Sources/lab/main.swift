/// `lab`: the Download Lab command line.
///
/// `lab serve` runs the lab's local HTTP server in the foreground, so students can point
/// curl, a browser or their own programs at fixtures that fail in scripted ways. `lab compare`
/// measures every lesson side by side, `lab report` draws the results as one HTML page, and
/// `lab exercise` checks a student's fixes, and `lab class` gathers a class's results on one page. Each subcommand has a file (or a folder) of its own;
/// one is added by listing its type in `Lab.configuration.subcommands`.

import ArgumentParser
import LabVocabulary
import LabHarness
import LabKit

struct Lab: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lab",
        abstract: "Download Lab: small programs that download files from a local, deliberately unreliable HTTP server.",
        version: LabVersion.current,
        subcommands: [
            Serve.self,
            InspectResumeData.self,
            Compare.self,
            Report.self,
            Exercise.self,
            Pages.self,
            Class.self,
            Doctor.self,
        ]
    )
}

Lab.mainReportingOneLineErrors()
