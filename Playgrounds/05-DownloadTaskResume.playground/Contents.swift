//: # Lesson 05: a download task, paused with resume data and resumed from it
//:
//: Start, Pause with `cancel(byProducingResumeData:)`, Resume with `downloadTask(withResumeData:)`,
//: and the file moved out of its temporary location in `didFinishDownloadingTo`. The resume data
//: is written to disk on Pause and read back on Resume, as an app that may be killed in between
//: must do. Run `swift run lab serve` in a terminal first.
//:
//: On Linux, Foundation's `cancel(byProducingResumeData:)` hands back nil, so there is nothing
//: to resume from and Resume starts over from byte 0: this playground prints that case. (On Linux
//: the lab's lesson 05 gets its URLSession from LabKit, whose download tasks keep the contract; on
//: a Mac it runs Apple's own, as this page does.)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: Change the port if `lab serve` printed another one.
let url = URL(string: "http://127.0.0.1:8080/fixtures/demo?size=8MiB")!

/// A file name that cannot lead outside the folder: the last component only (no `/`, `\` or
/// `..`), no leading dot, no control characters.
func safeFileName(_ suggested: String) -> String {
    let last = suggested.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
    var name = String(String.UnicodeScalarView(last.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }))
    while name.hasPrefix(".") { name.removeFirst() }
    name = String(name.prefix(200))
    return name.isEmpty ? "download" : name
}

//: The app's Documents folder; here a folder in the temporary directory. The file is named after
//: the resource (the URL's last path component, made safe), the resume data sits next to it.
let documents = FileManager.default.temporaryDirectory.appendingPathComponent("lesson-05-playground", isDirectory: true)
try? FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
let destination = documents.appendingPathComponent(safeFileName(url.lastPathComponent))
let resumeDataFile = documents.appendingPathComponent(destination.lastPathComponent + ".resumedata")
try? FileManager.default.removeItem(at: resumeDataFile)

final class Download: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: the session calls one method at a time on its serial queue, and the
    // playground reads the fields only after `stopped` is signalled.
    let destination: URL
    let resumeDataFile: URL
    var quartersShown: Int64 = 0
    var pausePressed = false
    /// The task Pause cancelled. On Linux it can go on reporting bytes, and even finish: what it
    /// reports after the Pause is ignored.
    var pausedTask: Int?
    var paused = false
    var outcome = ""
    let stopped = DispatchSemaphore(value: 0)  // after a Pause, or at the end
    #if canImport(FoundationNetworking)
    static let resumeDataKey = "NSURLSessionDownloadTaskResumeData"  // Linux lacks the constant
    #else
    static let resumeDataKey = NSURLSessionDownloadTaskResumeData
    #endif
    init(destination: URL, resumeDataFile: URL) {
        self.destination = destination
        self.resumeDataFile = resumeDataFile
    }

    /// Written to a temporary file and renamed: a kill mid-write never leaves half a blob.
    func save(_ resumeData: Data) {
        do {
            try resumeData.write(to: resumeDataFile, options: .atomic)
            print("  \(resumeData.count) bytes of resume data saved to \(resumeDataFile.lastPathComponent)")
        } catch {
            print("  cannot save the resume data: \(error.localizedDescription)")
        }
    }

    // Progress, in the task's own counts. Pause is pressed once, at 40%.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        let total = totalBytesExpectedToWrite
        guard total > 0, downloadTask.taskIdentifier != pausedTask else { return }
        // A quarter at a time. (On Linux totalBytesWritten can run ahead of the chunks handed
        // over, so compare with what was printed, not with totalBytesWritten - bytesWritten.)
        if totalBytesWritten * 4 / total > quartersShown {
            quartersShown = totalBytesWritten * 4 / total
            print("  \(quartersShown * 25)%")
        }
        if !pausePressed, totalBytesWritten * 10 >= total * 4 {
            pausePressed = true
            pausedTask = downloadTask.taskIdentifier
            print("Pause at byte \(totalBytesWritten) of \(total)")
            // The blob says where to go on: URL, bytes received, ETag, temporary file name.
            downloadTask.cancel(byProducingResumeData: { resumeData in
                if let resumeData {
                    self.save(resumeData)
                } else {
                    print("  cancel(byProducingResumeData:) handed back nil (always, on Linux)")
                }
                self.paused = true
                self.stopped.signal()
            })
        }
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                    expectedTotalBytes: Int64) {
        print("  resumed at byte \(fileOffset) of \(expectedTotalBytes)")
    }

    // `location` is deleted as soon as this returns: move the file out of it now.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard downloadTask.taskIdentifier != pausedTask else { return }
        do {
            try? FileManager.default.removeItem(at: destination)
            try FileManager.default.moveItem(at: location, to: destination)
            print("saved \(destination.path) (the temporary file was \(location.lastPathComponent))")
        } catch {
            outcome = "cannot move the file: \(error.localizedDescription)"
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        // The Pause's completion handler above tells the rest.
        guard task.taskIdentifier != pausedTask else { return }
        if let error {
            // A broken transfer hands over resume data too: keep it for the next Resume.
            if let resumeData = (error as NSError).userInfo[Self.resumeDataKey] as? Data {
                save(resumeData)
            }
            outcome = "failed: \(error.localizedDescription)"
        } else {
            if outcome.isEmpty { outcome = "complete" }
            try? FileManager.default.removeItem(at: resumeDataFile)
        }
        stopped.signal()
    }
}

let download = Download(destination: destination, resumeDataFile: resumeDataFile)
let session = URLSession(configuration: .default, delegate: download, delegateQueue: nil)

//: Start.
print("Start \(url.absoluteString)")
session.downloadTask(with: url).resume()
download.stopped.wait()

//: Resume, from the resume data on disk if the Pause produced any.
if download.paused {
    download.paused = false
    download.quartersShown = 0
    if let resumeData = try? Data(contentsOf: resumeDataFile) {
        print("Resume from \(resumeDataFile.lastPathComponent)")
        session.downloadTask(withResumeData: resumeData).resume()
    } else {
        print("Resume: no resume data on disk, so from byte 0")
        session.downloadTask(with: url).resume()
    }
    download.stopped.wait()
}
print(download.outcome)
session.finishTasksAndInvalidate()
