/// foundation-floor URL FILE: Foundation's floor, the least a URLSession download to a file
/// costs on this machine. foundation-floor --write FILE BYTES: the disk's, the least writing
/// that many bytes costs there.
///
/// A data delegate writes each chunk to a FileHandle on a serial delegate queue, and nothing
/// else happens: no progress, no inspector, no resume, no bound on memory, no verification.
/// `lab compare` runs it next to curl and wget, so that a lesson's time splits into what
/// Foundation costs (this program) and what the strategy adds (the rest). It is not a lesson:
/// on Linux its delegate queue has no limit, and a slow disk lets memory grow with the file.
///
/// With `--write`, zeros go to FILE in 1 MiB writes through a FileHandle, then `synchronize()`
/// waits until they are on the device: the disk's limit, which `lab compare` measures where the
/// lessons write. It is the lab's own, in Swift, so that it takes the same options on every
/// system (Apple's `dd` has no `conv=fdatasync`).
///
/// Exit status: 0 saved, 64 bad command line, 69 transfer failed or not a 200, 74 write failed;
/// each failure with one line on stderr.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class FloorDownload: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and main reads `failure` only after `done` is signalled.
    private let output: FileHandle
    private(set) var failure: (message: String, status: Int32)?
    let done = DispatchSemaphore(value: 0)

    init(writingTo output: FileHandle) { self.output = output }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if status != 200 { failure = ("the server answered HTTP \(status), not 200", 69) }
        completionHandler(failure == nil ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard failure == nil else { return }
        do {
            try output.write(contentsOf: data)
        } catch {
            failure = ("cannot write: \(error.localizedDescription)", 74)
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if failure == nil, let error { failure = (error.localizedDescription, 69) }
        done.signal()
    }
}

func fail(_ message: String, _ status: Int32) -> Never {
    FileHandle.standardError.write(Data("foundation-floor: \(message)\n".utf8))
    exit(status)
}

/// `bytes` of zeros into a new file at `path`, on the device when it returns.
func writeZeros(to path: String, bytes: Int64) -> Never {
    guard FileManager.default.createFile(atPath: path, contents: nil), let output = FileHandle(forWritingAtPath: path)
    else { fail("cannot create \(path)", 74) }
    let block = Data(count: 1 << 20)
    var left = bytes
    do {
        while left > 0 {
            let chunk = min(left, Int64(block.count))
            try output.write(contentsOf: chunk == block.count ? block : block.prefix(Int(chunk)))
            left -= chunk
        }
        try output.synchronize()
        try output.close()
    } catch {
        fail("cannot write \(path): \(error.localizedDescription)", 74)
    }
    exit(0)
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--write" {
    guard arguments.count == 3, let bytes = Int64(arguments.last!), bytes >= 0
    else { fail("usage: foundation-floor --write FILE BYTES", 64) }
    writeZeros(to: arguments[arguments.startIndex + 1], bytes: bytes)
}
guard arguments.count == 2, let url = URL(string: arguments.first!), ["http", "https"].contains(url.scheme ?? "")
else { fail("usage: foundation-floor http://HOST/PATH FILE, or foundation-floor --write FILE BYTES", 64) }
let path = arguments.last!
guard FileManager.default.createFile(atPath: path, contents: nil), let output = FileHandle(forWritingAtPath: path)
else { fail("cannot create \(path)", 74) }

let queue = OperationQueue()
queue.maxConcurrentOperationCount = 1
let download = FloorDownload(writingTo: output)
let session = URLSession(configuration: .ephemeral, delegate: download, delegateQueue: queue)
session.dataTask(with: url).resume()
download.done.wait()
session.finishTasksAndInvalidate()
try? output.close()
if let failure = download.failure { fail(failure.message, failure.status) }
