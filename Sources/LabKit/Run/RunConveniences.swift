import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What a lesson's code passes to the downloading types is what they need: a URL, a file, a log
// and a progress closure. These give them a lesson's run in one argument.

extension PartialFile {
    /// The partial file of `run`: its URL and its output file, told in its story and progress bar.
    public convenience init(_ run: LessonRun) {
        self.init(url: run.url, file: run.file, log: run.log, reportProgress: run.progress.update)
    }
}
