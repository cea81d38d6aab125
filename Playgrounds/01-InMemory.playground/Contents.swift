//: # Lesson 01: every chunk in one buffer in memory
//:
//: One experiment that needs no server, then a data delegate that collects a download in
//: memory. Run `swift run lab serve` in a terminal first for the second one.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: Change the port if `lab serve` printed another one. `faults=drop:40pct,ok` makes the server
//: cut the first GET at 40% and serve the second one in full. The run token is new on every
//: run of the playground, so the server starts counting GETs again.
let url = URL(string: "http://127.0.0.1:8080/fixtures/demo?size=8MiB&faults=drop:40pct,ok&run=\(UUID().uuidString)")!

//: ## 1. Turning NSMutableData into Data makes a copy
//: `Data` is a value: it must not change when the mutable object does, so `as Data` copies the
//: bytes. With a whole download in the buffer, that is a second file's worth of memory.
let grown = NSMutableData(data: Data([1, 2, 3, 4]))
let snapshot = grown as Data
grown.append(Data([5]))
print("NSMutableData has \(grown.length) bytes, the Data made from it \(snapshot.count)")  // 5, 4

//: ## 2. A data delegate that appends every chunk to one buffer
final class InMemoryDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: the session calls one method at a time on its serial queue, and the
    // playground reads the results only after `finished` is signalled.
    var body = Data()  // Data from the start, so saving it needs no copy
    var expected: Int64 = -1
    var problem: String?
    let finished = DispatchSemaphore(value: 0)

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        // Look at the status before keeping a byte: a 404 has a body too, an error page.
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            problem = "status \(status)"
            return completionHandler(.cancel)
        }
        // A new response means a new body: whatever came before is thrown away.
        body = Data()
        // One allocation of the announced size, instead of a buffer that keeps growing and moving.
        expected = response.expectedContentLength
        if expected > 0 { body.reserveCapacity(Int(expected)) }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard problem == nil else { return }  // refused: on Linux a chunk may still come through
        body.append(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if problem == nil, let error {
            problem = error.localizedDescription
        } else if problem == nil, expected >= 0, Int64(body.count) != expected {
            problem = "\(body.count) bytes arrived, \(expected) were announced"
        }
        finished.signal()
    }
}

func download() {
    let delegate = InMemoryDownload()
    let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
    session.dataTask(with: url).resume()
    delegate.finished.wait()
    session.finishTasksAndInvalidate()  // a session keeps its delegate until it is invalidated
    if let problem = delegate.problem {
        // Nothing was on disk: every byte received so far goes with the buffer.
        print("failed (\(problem)): \(delegate.body.count) bytes in memory are lost")
    } else {
        print("complete: \(delegate.body.count) bytes in memory, ready to write to a file")
    }
}
download()  // cut at 40%: nothing to resume from
download()  // so the next try starts again at byte 0
