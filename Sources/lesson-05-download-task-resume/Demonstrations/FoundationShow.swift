import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabHarness
import LabKit
import LabPlatform

/// Foundation's own download task on Linux, pausing and resuming, then cleaning up after it. On
/// Apple's systems the lesson's URLSession is Foundation's own, so there is nothing to show.
func showWhatFoundationDoes(_ run: LessonRun) {
    guard Platform.isLinux else {
        return run.log("Apple's URLSessionDownloadTask keeps the resume data contract itself: this lesson runs it")
    }
    guard run.faultFreeURL != run.url else {
        // With --url every request counts against that server's fault script: skip the show.
        return run.log("(Foundation's own download task is shown with the embedded server only)")
    }
    // Its temporary files go to $TMPDIR: a folder of our own for the show, deleted afterwards.
    let systemTemporary = ProcessInfo.processInfo.environment["TMPDIR"]
    let showFolder = LabFolders.mine.appendingPathComponent("show-\(getpid())", isDirectory: true)
    do {
        try LabFolders.make(showFolder)
    } catch {
        // Foundation's download task traps when it cannot create its file: skip the show.
        return run.log("(Foundation's own download task is not shown: cannot create \(showFolder.path))")
    }
    run.log("Foundation's URLSessionDownloadTask here:")
    setenv("TMPDIR", showFolder.path, 1)
    defer {
        if let systemTemporary { setenv("TMPDIR", systemTemporary, 1) } else { unsetenv("TMPDIR") }
    }

    let pausing = URLSession(configuration: .ephemeral)
    let task = pausing.downloadTask(with: run.faultFreeURL)
    task.resume()
    // Let some bytes arrive (for at most a second), then press Pause.
    for _ in 0..<100 where task.countOfBytesReceived == 0 { usleep(10_000) }
    let resumeData = run.waitForCompletion { done in task.cancel(byProducingResumeData: { done($0) }) }
    run.log("  cancel(byProducingResumeData:) handed back \(resumeData.map { "\($0.count) bytes" } ?? "nil")")

    // A blob of the kind iOS hands back; Foundation here cannot resume from any blob.
    let blob = try? ResumeData(downloadURL: run.faultFreeURL.absoluteString, bytesReceived: 0, entityTag: nil,
                               serverDownloadDate: nil, tempFileName: nil).encoded(as: .keyedArchive)
    let resumed = pausing.downloadTask(withResumeData: blob ?? Data())
    run.log("  downloadTask(withResumeData:) made a task with no request to send: originalRequest is "
        + (resumed.originalRequest?.url?.absoluteString ?? "nil"))
    // Resuming it fails with URLError -1002 (unsupported URL), and about once in 150 runs
    // Foundation traps inside resume() instead: it is not resumed here.
    run.log("  resuming such a task fails with unsupported URL (-1002); this lesson does not try")

    // Foundation never deletes its download temp files here: delete them on purpose.
    let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: showFolder.path)) ?? []
    try? FileManager.default.removeItem(at: showFolder)
    run.log("  deleted \(leftovers.count) temporary file(s) it left behind")
    run.log("so on Linux the lesson's URLSession is LabKit's, whose download tasks keep the resume data contract:")
}
