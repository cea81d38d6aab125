//: # Lesson 11: many connections at once
//:
//: The corrected strategy on its own: a first GET for the first MiB tells the file's size and
//: version; the rest is split into ranges fetched side by side, each with `If-Range`, each written
//: through a `FileHandle` of its own into a file made at its full size first. A 200 to a range
//: means the file changed (or the server ignores Range): then nothing is spliced. Run
//: `swift run lab serve` in a terminal first. (The lesson also keeps its plan beside the file, so a
//: relaunch asks only for what is missing; `Corrected+Plan.swift` shows how.)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: Change the port if `lab serve` printed another one. `throttle:4MiB*100` paces each connection
//: as a CDN does: try 1, 2, 4 and 8 connections and compare the times.
let url = URL(string: "http://127.0.0.1:8080/fixtures/demo?size=32MiB&faults=throttle:4MiB*100")!
let connections = 4
let file = FileManager.default.temporaryDirectory.appendingPathComponent("lesson-11-playground.bin")

final class Ranges: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the session calls one method at a time on its serial delegate queue.
    var handles: [Int: FileHandle] = [:]
    var validator = ""
    var outcome = "verified by nothing yet: compare the file's SHA-256 with /fixtures/demo.sha256?size=32MiB"
    let ended = DispatchGroup()

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard let http = response as? HTTPURLResponse, http.statusCode == 206,
              let first = Ranges.firstByte(of: http), http.value(forHTTPHeaderField: "ETag") == validator,
              let handle = try? FileHandle(forWritingTo: file) else {
            outcome = "a range came back as \((response as? HTTPURLResponse)?.statusCode ?? 0): start again from one stream"
            return completionHandler(.cancel)
        }
        // A write position of its own: no other range moves it.
        try? handle.seek(toOffset: UInt64(first))
        handles[dataTask.taskIdentifier] = handle
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        try? handles[dataTask.taskIdentifier]?.write(contentsOf: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? handles.removeValue(forKey: task.taskIdentifier)?.close()
        if let error { outcome = "a range failed: \(error.localizedDescription)" }
        ended.leave()
    }

    /// 5 of "bytes 5-9/100".
    static func firstByte(of response: HTTPURLResponse) -> Int64? {
        response.value(forHTTPHeaderField: "Content-Range")?.dropFirst("bytes ".count).split(separator: "-").first.flatMap { Int64($0) }
    }
}

//: The first MiB alone: its Content-Range has the total, its ETag the version.
var firstRequest = URLRequest(url: url)
firstRequest.setValue("bytes=0-1048575", forHTTPHeaderField: "Range")
let started = Date()
let (firstBody, firstAnswer) = try await URLSession.shared.data(for: firstRequest)
guard let first = firstAnswer as? HTTPURLResponse, first.statusCode == 206,
      let total = first.value(forHTTPHeaderField: "Content-Range")?.split(separator: "/").last.flatMap({ Int64($0) }),
      let etag = first.value(forHTTPHeaderField: "ETag") else { fatalError("no 206 with a total and an ETag: fetch it in one stream") }

//: The file at its full size, the first MiB in place, then the rest in ranges at once.
guard FileManager.default.createFile(atPath: file.path, contents: nil) else { fatalError("cannot create \(file.path)") }
let whole = try FileHandle(forWritingTo: file)
try whole.write(contentsOf: firstBody)
// After the write: truncate(atOffset:) leaves the handle's position at the new end.
try whole.truncate(atOffset: UInt64(total))
try whole.close()

let ranges = Ranges()
ranges.validator = etag
let configuration = URLSessionConfiguration.default
configuration.httpMaximumConnectionsPerHost = connections
let queue = OperationQueue()
queue.maxConcurrentOperationCount = 1
let session = URLSession(configuration: configuration, delegate: ranges, delegateQueue: queue)
let rest = total - Int64(firstBody.count)
let length = rest / Int64(connections)
for index in 0..<Int64(connections) {
    let from = Int64(firstBody.count) + index * length
    let to = index == Int64(connections) - 1 ? total - 1 : from + length - 1
    var request = URLRequest(url: url)
    request.setValue("bytes=\(from)-\(to)", forHTTPHeaderField: "Range")
    // A range of any other version comes back as a 200 with the whole new file.
    request.setValue(etag, forHTTPHeaderField: "If-Range")
    ranges.ended.enter()
    session.dataTask(with: request).resume()
}
ranges.ended.wait()
session.finishTasksAndInvalidate()
print("\(total) bytes over \(connections) connections in \(String(format: "%.2f", Date().timeIntervalSince(started))) s; \(ranges.outcome)")
