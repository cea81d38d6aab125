import Foundation
import LabKit
import LabVocabulary

/// `--har FILE`: the run's exchanges as an HTTP Archive, for a browser's network panel.
extension LessonProcess {
    /// `--har`: refused before the run, as `--output` is, when it names something that is not a file.
    func checkArchivePath() throws {
        guard let har = options.har else { return }
        let path = URL(fileURLWithPath: har)
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path.deletingLastPathComponent().path, isDirectory: &isFolder), isFolder.boolValue else {
            throw DownloadError.localIO(path: har, reason: "there is no folder \(path.deletingLastPathComponent().path) to write it in")
        }
        do {
            try OutputFile.checkReplaceable(path)
        } catch let error as OutputFileError {
            throw DownloadError.localIO(path: har, reason: error.reason)
        }
    }

    /// The run's exchanges as HAR 1.2, written whole or not at all; a failure to write is one line.
    func writeArchive(of result: LessonResult) -> Bool {
        guard let har = options.har else { return true }
        let faults = options.url == nil ? options.faults ?? lesson.id.defaultFaults : .none
        let archive = HTTPArchive(exchanges: result.requests, faults: faults,
                                  comment: "\(lesson.command), \(options.variant.rawValue)\(faults.isNone ? "" : ", faults \(faults)")")
        do {
            try archive.json().write(to: URL(fileURLWithPath: har), options: .atomic)
            return true
        } catch {
            Console.error("\(lesson.command): cannot write \(har): \(describe(error))")
            return false
        }
    }
}
