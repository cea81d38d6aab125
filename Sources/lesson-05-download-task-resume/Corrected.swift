/// Lesson 05, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/05-download-task-resume.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Keeps the resume data on disk, next to the download, from the first byte to the last.
final class CorrectedDownload: NSObject, LessonDownload, ResumableDownloadTaskDelegate, @unchecked Sendable {
    // @unchecked: the task's callbacks come on its serial delegate queue; downloadFile() reads
    // the outcome only after `done` is signalled.
    private let run: LessonRun
    private let resumeDataFile: URL
    // One session for the whole download, invalidated when the file is saved.
    private lazy var session = ResumableDownloadSession(temporaryFolder: App.temporaryFolder, run: run, delegate: self)
    private var task: ResumableDownloadTask?
    private var pausedOnce = false
    private var savedAt: Int64 = 0
    private var savedWhen: ContinuousClock.Instant?
    private var outcome: AttemptResult?
    private let done = DispatchSemaphore(value: 0)

    init(_ run: LessonRun) {
        self.run = run
        resumeDataFile = run.file.appendingPathComponent(safeFileName(run.url.lastPathComponent) + ".resumedata")
    }

    func downloadFile() -> AttemptResult {
        // Resume data on disk survives a kill: start from it if there is any.
        start { try taskFromResumeDataOnDisk() ?? session.downloadTask(with: run.url) }
        done.wait()
        return outcome!
    }

    /// Starts the task `makeTask` gives, or ends this attempt with the error it throws.
    private func start(_ makeTask: () throws -> ResumableDownloadTask) {
        do {
            task = try makeTask()
            task?.resume()
        } catch {
            outcome = .failed(error)
            done.signal()
        }
    }

    /// The task that continues from the resume data on disk, or nil when there is none for this URL.
    private func taskFromResumeDataOnDisk() throws -> ResumableDownloadTask? {
        guard let resumeData = try? Data(contentsOf: resumeDataFile) else { return nil }
        let resumed: ResumableDownloadTask
        do {
            resumed = try session.downloadTask(withResumeData: resumeData)
        } catch {
            // Not resume data, or a temp file name that leads out of the temp folder: nothing is
            // deleted on the word of such a file. It stays for a person to look at.
            throw DownloadError.unusableResumeData(path: resumeDataFile.path, reason: "\(error)")
        }
        guard resumed.url == run.url else {
            // Its temp file name was checked: it can only name a file in the lesson's temp folder.
            run.log("\(resumeDataFile.lastPathComponent) is for another URL, \(ShownURL.brief(resumed.url)): starting over")
            try? FileManager.default.removeItem(at: resumed.tempFile)
            try? FileManager.default.removeItem(at: resumeDataFile)
            return nil
        }
        run.log("resuming from \(resumeDataFile.lastPathComponent)")
        return resumed
    }

    private var toldSaveFailure = false

    /// Written to a temporary file and renamed, so a kill mid-write never leaves half a blob.
    /// False (said once in the story) when there is nothing to save or it cannot be written.
    @discardableResult
    private func save(_ resumeData: Data?) -> Bool {
        guard let resumeData else { return false }
        do {
            try resumeData.write(to: resumeDataFile, options: .atomic)
            return true
        } catch {
            if !toldSaveFailure { run.log("cannot save resume data to \(resumeDataFile.path): \(error.localizedDescription)") }
            toldSaveFailure = true
            return false
        }
    }

    func downloadTask(_ task: ResumableDownloadTask, didResumeAtOffset fileOffset: Int64, expectedTotalBytes: Int64) {
        run.log(fileOffset > 0 ? "resumed at byte \(fileOffset) of \(expectedTotalBytes)"
                               : "the file changed on the server: starting over from byte 0")
    }

    func downloadTask(_ task: ResumableDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
                      totalBytesExpectedToWrite: Int64) {
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
        // A kill gives no warning: keep the resume data on disk current, every 4 MiB, but not
        // more than ten times a second. Making a blob takes about 2 ms (a keyed archive), here
        // on the delegate queue the transfer waits for: every 4 MiB alone cost 0.5 s per GiB.
        if totalBytesWritten - savedAt >= 4 << 20, savedWhen.map({ .now - $0 >= .milliseconds(100) }) ?? true {
            save(task.currentResumeData())
            savedAt = totalBytesWritten
            savedWhen = .now
        }
        if !pausedOnce, totalBytesWritten < totalBytesExpectedToWrite,
           Double(totalBytesWritten) >= App.pausePressedAt * Double(totalBytesExpectedToWrite) {
            pausedOnce = true
            run.log("pause")
            task.cancel(byProducingResumeData: { resumeData in
                // The copy on disk is for a rerun after a kill; Resume uses the blob in hand.
                if self.save(resumeData) { self.run.log("resume data saved to \(self.resumeDataFile.lastPathComponent)") }
                self.run.log("resume")
                self.start {
                    try resumeData.map(self.session.downloadTask(withResumeData:)) ?? self.session.downloadTask(with: self.run.url)
                }
            })
        }
    }

    /// Named after the resource (the server's suggested name, else the URL's), never the temp file.
    func downloadTask(_ task: ResumableDownloadTask, didFinishDownloadingTo location: URL) {
        // Content-Disposition names it if the server sent one; otherwise the URL's path does.
        let disposition = task.response?.value(forHTTPHeaderField: "Content-Disposition")
        let name = safeFileName(disposition != nil ? task.response?.suggestedFilename ?? "" : run.url.lastPathComponent)
        let destination = run.file.appendingPathComponent(name)
        do {
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: location, to: destination)
            run.saved(destination)
        } catch {
            failure = DownloadError.localIO(path: destination.path, reason: error.localizedDescription)
        }
    }

    private var failure: (any Error)?

    func downloadTask(_ task: ResumableDownloadTask, didCompleteWithError error: (any Error)?) {
        if let error = failure ?? error {
            // A broken transfer hands over resume data in its error: keep it for the next attempt.
            // A failed write (a full disk) carries none, but the bytes written before it are good.
            let resumeData = (error as NSError).userInfo[ResumableDownloadTask.resumeDataKey] as? Data ?? task.currentResumeData()
            // No resume data points at the temp file then, so nothing could ever resume from it.
            if !save(resumeData), !FileManager.default.fileExists(atPath: resumeDataFile.path),
               (try? FileManager.default.removeItem(at: task.tempFile)) != nil {
                run.log("removed \(task.tempFile.lastPathComponent): no resume data could be kept for it")
            }
            outcome = .failed(error)
        } else {
            try? FileManager.default.removeItem(at: resumeDataFile)
            session.finishTasksAndInvalidate()
            outcome = .finished
        }
        done.signal()
    }
}

/// A file name for a resource that cannot lead outside the folder: the last component of
/// `suggested` only (no `/`, `\` or `..`), no leading dot, no control characters.
func safeFileName(_ suggested: String) -> String {
    let last = suggested.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
    var name = String(String.UnicodeScalarView(last.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }))
    while name.hasPrefix(".") { name.removeFirst() }
    name = String(name.prefix(200))
    return name.isEmpty ? "download" : name
}
