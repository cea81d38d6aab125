//: # Lesson 02: FileHandle, write at the end, resume with Range
//:
//: Each chunk goes to the end of a file as it arrives, so a broken download leaves a partial
//: file to continue from. The article used NSURLConnection (deprecated on macOS, missing on
//: Linux); a URLSession data delegate gets the same callbacks. Run `swift run lab serve` first.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: Change the port if `lab serve` printed another one. `faults=drop:40pct,ok` cuts the first GET
//: at 40%. Also try `drop:40pct,change` (the file changes before the resume) and
//: `drop:40pct,shift-range:-100` (a 206 that starts 100 bytes too early).
let url = URL(string: "http://127.0.0.1:8080/fixtures/demo?size=8MiB&faults=drop:40pct,ok&run=\(UUID().uuidString)")!
let file = FileManager.default.temporaryDirectory.appendingPathComponent("lesson-02-playground.bin")
try? FileManager.default.removeItem(at: file)

func sizeOnDisk(_ file: URL) -> Int64 {  // Int64: a 32-bit int wraps past 2 GiB
    let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
    return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
}

/// The article wrote `"bytes:\(offset)-"`, with a colon. Try it: the server does not understand
/// it, ignores it and answers 200 with the whole file. The check on 200 below then starts the
/// file over instead of appending a second copy after the partial one.
func rangeHeader(from offset: Int64) -> String { "bytes=\(offset)-" }

final class FileHandleDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the session calls one method at a time on its serial queue, and the
    // playground reads the results only after `finished` is signalled.
    let file: URL
    var handle: FileHandle?
    var etag: String?  // which version of the file the bytes on disk belong to
    var report = ""
    let finished = DispatchSemaphore(value: 0)
    init(file: URL) { self.file = file }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        let onDisk = sizeOnDisk(file)
        let contentRange = http?.value(forHTTPHeaderField: "Content-Range") ?? "none"
        report = "status \(http?.statusCode ?? 0), Content-Range \(contentRange)"
        let writeFrom: Int64
        switch http?.statusCode {
        case 200: writeFrom = 0  // the whole file: what is on disk must go, or the two get spliced
        case 206 where contentRange.hasPrefix("bytes \(onDisk)-"): writeFrom = onDisk  // exactly the rest
        default: report += ", refused"; return completionHandler(.cancel)
        }
        etag = http?.value(forHTTPHeaderField: "ETag")
        do {
            // A file handle for writing cannot be opened on a missing file: create it first.
            if !FileManager.default.fileExists(atPath: file.path) {
                _ = FileManager.default.createFile(atPath: file.path, contents: nil)
            }
            handle = try FileHandle(forWritingTo: file)
            // Cut off anything past writeFrom, so "the end" is exactly where the next byte belongs.
            try handle?.truncate(atOffset: UInt64(writeFrom))
            completionHandler(.allow)
        } catch {
            report += ", cannot write the file: \(error.localizedDescription)"
            completionHandler(.cancel)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        do {
            // Move to the end, write the chunk there: memory only ever holds one chunk.
            try handle?.seekToEnd()
            try handle?.write(contentsOf: data)
        } catch {
            report += ", write failed: \(error.localizedDescription)"
            handle = nil
            // On Linux, cancel() on the delegate's own queue can wait for itself: ask from elsewhere.
            DispatchQueue.global().async { dataTask.cancel() }
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? handle?.close()
        handle = nil
        report += error.map { ", ended: \($0.localizedDescription)" } ?? ", ended"
        finished.signal()
    }
}

let download = FileHandleDownload(file: file)
let session = URLSession(configuration: .ephemeral, delegate: download, delegateQueue: nil)
for _ in 1...2 {
    var request = URLRequest(url: url)
    let onDisk = sizeOnDisk(file)
    // Ask for the rest only when you know which file it is the rest of. With If-Range, a server
    // whose file has changed sends 200 and the new file, not a 206 of the wrong one.
    if onDisk > 0, let etag = download.etag {
        request.setValue(rangeHeader(from: onDisk), forHTTPHeaderField: "Range")
        request.setValue(etag, forHTTPHeaderField: "If-Range")
    }
    session.dataTask(with: request).resume()
    download.finished.wait()
    print("from byte \(onDisk): \(download.report); \(sizeOnDisk(file)) bytes on disk")
}
session.finishTasksAndInvalidate()
