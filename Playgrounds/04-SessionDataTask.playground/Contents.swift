//: # Lesson 04: a URLSession data task with its own data delegate
//:
//: Three callbacks carry the whole download: the response (allow it or refuse it), each chunk,
//: and one end for success and failure alike. Run `swift run lab serve` in a terminal first.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: Change the port if `lab serve` printed another one. `faults=drop:40pct,ok` cuts the first GET
//: at 40%. Also try `drop:40pct,change` (the file changes before the resume) and `status:404`.
let url = URL(string: "http://127.0.0.1:8080/fixtures/demo?size=8MiB&faults=drop:40pct,ok&run=\(UUID().uuidString)")!
let file = FileManager.default.temporaryDirectory.appendingPathComponent("lesson-04-playground.bin")
try? FileManager.default.removeItem(at: file)
_ = FileManager.default.createFile(atPath: file.path, contents: nil)

final class DataTaskDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the session calls one method at a time on its serial queue, and the
    // playground reads the results only after `finished` is signalled.
    let file: URL
    var handle: FileHandle?
    var onDisk: Int64 = 0   // counted here, chunk by chunk
    var total: Int64 = -1   // the whole file, once a response has told us
    var etag: String?
    var stopped: String?    // why this code stopped the task, if it did
    let finished = DispatchSemaphore(value: 0)
    init(file: URL) { self.file = file }

    // 1. The response, before any byte of the body: decide whether the body is worth having.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let http = response as? HTTPURLResponse
        let contentRange = http?.value(forHTTPHeaderField: "Content-Range") ?? "none"
        print("status \(http?.statusCode ?? 0), Content-Range \(contentRange)")
        stopped = nil
        switch http?.statusCode {
        case 200:  // the whole file, from byte 0: forget what is on disk
            onDisk = 0
            total = response.expectedContentLength
        case 206 where contentRange.hasPrefix("bytes \(onDisk)-"):  // exactly the missing part
            total = Int64(contentRange.split(separator: "/").last ?? "") ?? -1
        default:
            // .cancel refuses the body. That is the clean way to stop from in here.
            stopped = "refused"
            return completionHandler(.cancel)
        }
        etag = http?.value(forHTTPHeaderField: "ETag")
        do {
            handle = try FileHandle(forWritingTo: file)
            try handle?.truncate(atOffset: UInt64(onDisk))  // drops extra bytes; writes go on from here
            completionHandler(.allow)
        } catch {
            stopped = "cannot write the file: \(error.localizedDescription)"
            completionHandler(.cancel)
        }
    }

    // 2. Each chunk, in order, as it arrives.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let handle, stopped == nil else { return }  // on Linux a chunk can follow a .cancel
        do {
            try handle.write(contentsOf: data)
        } catch {
            stopped = "write failed: \(error.localizedDescription)"
            // cancel() on the delegate's own queue can wait for itself on Linux: ask from elsewhere.
            return DispatchQueue.global().async { dataTask.cancel() }
        }
        let before = onDisk
        onDisk += Int64(data.count)
        // Progress is bytes on disk over the whole file, and only this code knows both.
        if total > 0, before * 4 / total != onDisk * 4 / total {
            print("  \(onDisk * 100 / total)%")
        }
    }

    // 3. The end, for success and failure alike (NSURLConnection had two callbacks for this).
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? handle?.close()
        handle = nil
        // countOfBytesReceived counts this task only, and stays 0 on Linux: count yourself.
        print("ended: \(stopped ?? error?.localizedDescription ?? "complete"); counted \(onDisk) bytes on disk,"
              + " countOfBytesReceived says \(task.countOfBytesReceived)")
        finished.signal()
    }
}

let download = DataTaskDownload(file: file)
let session = URLSession(configuration: .ephemeral, delegate: download, delegateQueue: nil)
for _ in 1...2 {
    var request = URLRequest(url: url)
    // Range asks for the rest; If-Range adds "only if the file is still this version".
    // If it changed, the server sends 200 and the new file, which the delegate starts over with.
    if download.onDisk > 0, let etag = download.etag {
        request.setValue("bytes=\(download.onDisk)-", forHTTPHeaderField: "Range")
        request.setValue(etag, forHTTPHeaderField: "If-Range")
    }
    session.dataTask(with: request).resume()
    download.finished.wait()
}
session.finishTasksAndInvalidate()
