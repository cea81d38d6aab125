/// Lesson 05, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/05-download-task-resume.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun) -> any LessonDownload { CorrectedDownload(run) }

/// Keeps the resume data on disk, next to the download, whenever there is some to keep.
final class CorrectedDownload: NSObject, LessonDownload, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks, and the Pause handler, run
    // one at a time on the session's serial delegate queue; downloadFile(completion:) sets the
    // state before a task starts.
    private let run: LessonRun
    private let resumeDataFile: URL
    // One session for the whole download, invalidated when the file is saved.
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)
    private var pausedOnce = false
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) {
        self.run = run
        resumeDataFile = run.file.appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: [".resumedata"]) + ".resumedata")
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        (failure, self.completion) = (nil, completion)
        do {
            // Resume data on disk survives a kill: start from it if there is any.
            (try taskFromResumeDataOnDisk() ?? session.downloadTask(with: request)).resume()
        } catch {
            return finish(.failed(error))
        }
    }

    /// The file as it is: URLSession would ask for gzip, and a compressed body comes without
    /// ranges (nginx), so a pause could not be resumed. The resume data keeps this request.
    private var request: URLRequest {
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        return request
    }

    /// The task that continues from the resume data on disk, or nil when there is none for this URL.
    private func taskFromResumeDataOnDisk() throws -> URLSessionDownloadTask? {
        let size = (try? FileManager.default.attributesOfItem(atPath: resumeDataFile.path)[.size] as? NSNumber)?.int64Value ?? 0
        // Resume data is a few kilobytes: a larger file is not read into memory to find out.
        guard size <= 1 << 20 else {
            throw DownloadError.unusableResumeData(path: resumeDataFile.path, reason: "\(size) bytes, far more than resume data holds")
        }
        guard let resumeData = try? Data(contentsOf: resumeDataFile) else { return nil }
        let resumed = session.downloadTask(withResumeData: resumeData)
        guard let url = resumed.originalRequest?.url else {
            // Not resume data, or a temporary file name that leads out of the temporary folder:
            // nothing is deleted on the word of such a file. It stays for a person to look at.
            throw DownloadError.unusableResumeData(path: resumeDataFile.path, reason: "no request can be read from it")
        }
        guard url == run.url else {
            run.log("\(resumeDataFile.lastPathComponent) is for another URL, \(url.absoluteString): starting over")
            resumed.cancel()  // its partial file is of no use
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

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        run.log(fileOffset > 0 ? "resumed at byte \(fileOffset) of \(expectedTotalBytes)"
                               : "the file changed on the server: starting over from byte 0")
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        // A server may compress all the same: its total then counts the compressed bytes, not these.
        let compressed = (downloadTask.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Encoding") != nil
        let expected = compressed ? NSURLSessionTransferSizeUnknown : totalBytesExpectedToWrite
        run.progress.update(received: totalBytesWritten, expected: expected)
        if !pausedOnce, totalBytesWritten < expected, Double(totalBytesWritten) >= App.pausePressedAt * Double(expected) {
            pausedOnce = true
            run.userPressed("Pause", log: "pause")
            downloadTask.cancel(byProducingResumeData: { resumeData in
                // The download may have finished before Pause took hold: then nothing is left to resume.
                guard self.completion != nil else { return }
                // On disk at once: a kill from now on resumes from here.
                if self.save(resumeData) { self.run.log("resume data saved to \(self.resumeDataFile.lastPathComponent)") }
                self.run.log("resume")
                (resumeData.map(self.session.downloadTask(withResumeData:)) ?? self.session.downloadTask(with: self.request))
                    .resume()
            })
        }
    }

    /// Named after the resource (the server's suggested name, else the URL's), never the temp file.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        // A download task saves any answer's body, an error page's too: the status says which it is.
        let response = downloadTask.response as? HTTPURLResponse
        guard let response, (200...299).contains(response.statusCode) else {
            failure = DownloadError.httpStatus(response?.statusCode ?? 0, url: (response?.url ?? run.url).absoluteString)
            return
        }
        // Content-Disposition names it if the server sent one; otherwise the URL's path does.
        let disposition = response.value(forHTTPHeaderField: "Content-Disposition")
        let name = safeFileName(disposition != nil ? response.suggestedFilename ?? "" : run.url.lastPathComponent,
                                besideSidecars: [".resumedata"])
        let destination = freeDestination(for: name, in: run.file)
        do {
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: location, to: destination)
            run.saved(destination)
        } catch {
            failure = DownloadError.localIO(path: destination.path, reason: error.localizedDescription)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // A paused task ends here too, cancelled; its Pause handler keeps its resume data.
        if failure == nil, (error as? URLError)?.code == .cancelled { return }
        if let error = failure ?? error {
            // A broken transfer, or a failed write, hands over resume data in its error: keep it
            // for the next attempt. Whatever was saved before stays otherwise.
            save((error as? URLError)?.downloadTaskResumeData)
            finish(.failed(error))
        } else {
            try? FileManager.default.removeItem(at: resumeDataFile)
            session.finishTasksAndInvalidate()
            finish(.finished)
        }
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        // Cleared before the call: the next Start may hand over a new completion at once.
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}

/// Where the finished file goes: an earlier file of that name is replaced, as a rerun expects,
/// but a folder of that name is never removed for it (a server chooses the name): the file then
/// gets a number, `name (2)`.
func freeDestination(for name: String, in folder: URL) -> URL {
    func isFolder(_ url: URL) -> Bool {
        // attributesOfItem does not follow a link: a link is replaced, never what it points at.
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType) == .typeDirectory
    }
    var destination = folder.appendingPathComponent(name)
    var number = 2
    while isFolder(destination) {
        destination = folder.appendingPathComponent("\(name) (\(number))")
        number += 1
    }
    return destination
}
