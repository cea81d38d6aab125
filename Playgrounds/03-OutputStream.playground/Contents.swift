//: # Lesson 03: OutputStream append and Range resume
//:
//: Two experiments that need no server, then one against `lab serve`.
//: Run `swift run lab serve` in a terminal first for the third one.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: ## 1. `append: true` continues a file, `append: false` starts it over
let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lesson-03-playground")
try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
let file = folder.appendingPathComponent("demo.bin")
try? FileManager.default.removeItem(at: file)

func append(_ text: String, to path: String, append: Bool) -> Int {
    let stream = OutputStream(toFileAtPath: path, append: append)!
    stream.open()
    defer { stream.close() }
    let bytes = Array(text.utf8)
    // write returns how many bytes went out; -1 means an error. Always look at it.
    return stream.write(bytes, maxLength: bytes.count)
}

_ = append("first half, ", to: file.path, append: true)
_ = append("second half", to: file.path, append: true)
print(try String(contentsOf: file, encoding: .utf8))  // first half, second half
_ = append("again", to: file.path, append: false)
print(try String(contentsOf: file, encoding: .utf8))  // again

//: ## 2. Check a Content-Range before appending
//: A resume is safe only when the server sends a 206 whose range starts where the file ends.
func continuesFile(status: Int, contentRange: String?, localSize: Int64) -> Bool {
    guard status == 206, let contentRange, contentRange.hasPrefix("bytes ") else { return false }
    let spec = contentRange.dropFirst("bytes ".count)
    guard let dash = spec.firstIndex(of: "-"), let first = Int64(spec[..<dash]) else { return false }
    return first == localSize
}

print(continuesFile(status: 206, contentRange: "bytes 100-999/1000", localSize: 100))  // true
print(continuesFile(status: 206, contentRange: "bytes 0-999/1000", localSize: 100))    // false: overlaps
print(continuesFile(status: 200, contentRange: nil, localSize: 100))                    // false: whole file

//: ## 3. Ask `lab serve` for the rest of a file
//: Change the port if `lab serve` printed another one. The `faults` item makes the server
//: ignore Range on the second request: watch the status change from 206 to 200.
let url = URL(string: "http://127.0.0.1:8080/fixtures/playground?size=1MiB&faults=ok,ignore-range&run=pg")!
func requestRest(from offset: Int64) {
    var request = URLRequest(url: url)
    request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
    let done = DispatchSemaphore(value: 0)
    URLSession.shared.dataTask(with: request) { data, response, error in
        if let response = response as? HTTPURLResponse {
            let range = response.value(forHTTPHeaderField: "Content-Range") ?? "(none)"
            print("status \(response.statusCode), Content-Range \(range), \(data?.count ?? 0) bytes")
        } else {
            print("no answer: \(error?.localizedDescription ?? "unknown error"); is lab serve running?")
        }
        done.signal()
    }.resume()
    done.wait()
}
requestRest(from: 524_288)  // status 206, Content-Range bytes 524288-1048575/1048576
requestRest(from: 524_288)  // status 200: appending this would splice the file
