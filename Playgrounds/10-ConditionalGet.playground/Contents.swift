//: # Lesson 10: don't download it twice
//:
//: The corrected strategy on its own: the file in Application Support, its ETag and Last-Modified
//: in a small JSON file beside it, and one request per launch, a conditional GET once both are
//: there. A 304 keeps the file; a 200 replaces it, once its length checks out. The "app" is launched
//: twice: the first launch downloads (200), the second learns the file is current (304). Run
//: `swift run lab serve` in a terminal first.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: Change the port if `lab serve` printed another one. Add `&faults=ok,change&run=` and a new token
//: to have the file change on the server between the launches: then the second gets a 200 too.
let url = URL(string: "http://127.0.0.1:8080/fixtures/demo?size=8MiB")!

//: Application Support: kept until the app removes it, never emptied by the system as Caches may
//: be. The folder is removed first, as on a fresh install, so the first launch downloads.
let folder = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
    .appendingPathComponent("lesson-10-playground", isDirectory: true)
try? FileManager.default.removeItem(at: folder)
try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let file = folder.appendingPathComponent(url.lastPathComponent)

/// What the server said about the version on disk; the next launch sends it back.
struct Validators: Codable {
    var entityTag: String?
    var lastModified: String?
}

final class Launch: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: the session calls one method at a time on its serial queue; `outcome` is read after `finished`.
    let file: URL
    var validatorsFile: URL { file.appendingPathExtension("validators") }
    var outcome = ""
    let finished = DispatchSemaphore(value: 0)
    init(file: URL) { self.file = file }

    /// Nil unless the file and its validators are both there: nothing unproven is trusted.
    func keptValidators() -> Validators? {
        guard FileManager.default.fileExists(atPath: file.path),
              let data = try? Data(contentsOf: validatorsFile),
              let kept = try? JSONDecoder().decode(Validators.self, from: data),
              kept.entityTag != nil || kept.lastModified != nil
        else { return nil }
        return kept
    }

    // `location` is deleted as soon as this returns: the file is put in place now.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard let response = downloadTask.response as? HTTPURLResponse else { return }
        let asked = ["If-None-Match", "If-Modified-Since"].contains { downloadTask.originalRequest?.value(forHTTPHeaderField: $0) != nil }
        let received = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? NSNumber)?.int64Value ?? 0
        switch response.statusCode {
        case 304 where asked:
            outcome = "304 Not Modified: \(file.lastPathComponent) is current, nothing downloaded"
        // A body cut short ends the task without an error when the server closes on time.
        case 200 where response.value(forHTTPHeaderField: "Content-Encoding") == nil
            && response.expectedContentLength >= 0 && received != response.expectedContentLength:
            outcome = "200, but \(received) of \(response.expectedContentLength) bytes: the old file is kept"
        case 200:
            do {
                try keep(location, from: response)
                outcome = "200 OK: \(received) bytes saved, with their ETag and Last-Modified"
            } catch {
                outcome = "cannot keep the file: \(error.localizedDescription)"
            }
        default:
            outcome = "status \(response.statusCode): the file on disk, if any, is kept"
        }
    }

    private func keep(_ location: URL, from response: HTTPURLResponse) throws {
        let manager = FileManager.default
        // The old validators go first: a launch cut short here finds none, and never pairs a new ETag with old bytes.
        if manager.fileExists(atPath: validatorsFile.path) { try manager.removeItem(at: validatorsFile) }
        // Beside the file first: across volumes a move copies, and the swap must not.
        let incoming = file.appendingPathExtension("incoming")
        try? manager.removeItem(at: incoming)
        try manager.moveItem(at: location, to: incoming)
        if manager.fileExists(atPath: file.path) {
            // Apple's call for this: one step, so a crash leaves the old version or the new, never neither.
            // (The lab's lesson uses rename(2): Linux's Foundation gets replaceItemAt wrong.)
            _ = try manager.replaceItemAt(file, withItemAt: incoming)
        } else {
            try manager.moveItem(at: incoming, to: file)
        }
        // It can be downloaded again: no place in the user's backups.
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        var saved = file
        try saved.setResourceValues(values)
        let validators = Validators(entityTag: response.value(forHTTPHeaderField: "ETag"),
                                    lastModified: response.value(forHTTPHeaderField: "Last-Modified"))
        try JSONEncoder().encode(validators).write(to: validatorsFile, options: .atomic)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { outcome = "failed: \(error.localizedDescription)" }
        finished.signal()
    }
}

/// One launch of the app: a new object that finds only what the last launch left on disk.
func launch(_ number: Int, url: URL, file: URL) {
    let launch = Launch(file: file)
    // No URL cache: the file on disk is the one copy, and the app asks the server itself.
    let configuration = URLSessionConfiguration.default
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    let session = URLSession(configuration: configuration, delegate: launch, delegateQueue: nil)
    var request = URLRequest(url: url)
    if let kept = launch.keptValidators() {
        // RFC 9110: a server that knows the ETag compares it and ignores the date.
        request.setValue(kept.entityTag, forHTTPHeaderField: "If-None-Match")
        request.setValue(kept.lastModified, forHTTPHeaderField: "If-Modified-Since")
    }
    session.downloadTask(with: request).resume()
    launch.finished.wait()
    session.finishTasksAndInvalidate()
    print("launch \(number): \(launch.outcome)")
}

launch(1, url: url, file: file)
launch(2, url: url, file: file)
