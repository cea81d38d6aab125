//: # Lesson 00: a small file in one call
//:
//: Two ways to get a whole file with one call, then the checks that make the answer
//: trustworthy. Run `swift run lab serve` in a terminal first.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: Any URL works. This one asks `lab serve` for an 8 MiB file. Change the port if `lab serve`
//: printed another one.
let url = URL(string: "http://127.0.0.1:8080/fixtures/demo?size=8MiB")!

/// Starts a data task and waits for its completion handler, which runs once, at the very end,
/// with the whole body, the response and the error together.
func fetch(_ request: URLRequest) -> (Data?, URLResponse?, (any Error)?) {
    let done = DispatchSemaphore(value: 0)
    // Written once by the handler, read only after the signal.
    nonisolated(unsafe) var result: (Data?, URLResponse?, (any Error)?) = (nil, nil, nil)
    URLSession.shared.dataTask(with: request) { data, response, error in
        result = (data, response, error)
        done.signal()
    }.resume()
    done.wait()
    return result
}

//: ## 1. A data task with a completion handler
//: Until the handler runs there is nothing to look at: no progress, and if the connection
//: breaks halfway, nothing is kept. The whole body sits in memory at once.
let (data, response, error) = fetch(URLRequest(url: url))
let status = (response as? HTTPURLResponse)?.statusCode ?? 0
print("data task: \(data?.count ?? 0) bytes, status \(status), error \(error.map { "\($0)" } ?? "none")")

//: ## 2. `Data(contentsOf:)`
//: Shorter still, but the calling thread waits for the whole body (never on an app's main
//: thread), and there is no response: no status code, no headers to check.
do {
    print("Data(contentsOf:): \(try Data(contentsOf: url).count) bytes")
} catch {
    print("Data(contentsOf:) failed: \(error.localizedDescription)")
}

//: ## 3. The same data task, checked
struct Refused: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}
let inMemoryLimit: Int64 = 64 << 20  // bigger than this belongs in a file, chunk by chunk

func checkedDownload(_ url: URL) throws -> Data {
    // The handler shows the response only together with the body, so learn the size first:
    // a HEAD costs one round trip and no body.
    var head = URLRequest(url: url)
    head.httpMethod = "HEAD"
    let (_, headResponse, headError) = fetch(head)
    if let headError { throw headError }
    let headStatus = (headResponse as? HTTPURLResponse)?.statusCode ?? 0
    guard headStatus == 200 else { throw Refused(reason: "HEAD got status \(headStatus)") }
    let expected = headResponse?.expectedContentLength ?? -1  // -1: the server did not say
    guard expected <= inMemoryLimit else { throw Refused(reason: "\(expected) bytes is too big for memory") }

    let (data, response, error) = fetch(URLRequest(url: url))
    if let error { throw error }  // no server, a timeout, a connection that broke...
    // A 404 or a 500 comes with a body too: an error page, not the file.
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    guard status == 200 else { throw Refused(reason: "status \(status)") }
    guard let data else { throw Refused(reason: "no body") }
    // The body must be as long as announced, or it is not the file the HEAD described.
    if expected >= 0, Int64(data.count) != expected {
        throw Refused(reason: "\(data.count) bytes arrived, \(expected) were announced")
    }
    return data
}

//: Each check in action. `lab serve` counts the GETs of each URL to choose the next fault; a
//: new run token every time the playground runs starts those counts again. For the size
//: limit, change `size=8MiB` to `size=128MiB` at the top.
let run = UUID().uuidString.prefix(8)
for faults in ["ok", "status:404", "bad-length:-100"] {  // -100: 100 bytes fewer than the HEAD said
    let faultyURL = URL(string: "\(url.absoluteString)&faults=\(faults)&run=\(run)")!
    do {
        print("\(faults): \(try checkedDownload(faultyURL).count) bytes, as announced")
    } catch {
        print("\(faults): refused, \(error)")
    }
}
