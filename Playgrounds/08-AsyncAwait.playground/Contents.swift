//: # Lesson 08: the same download with async/await
//:
//: One `try await` replaces a delegate or a completion handler. The questions stay: where does
//: the body go, what happens to memory, what does cancelling do. Run `swift run lab serve` in a
//: terminal first.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

//: Change the port if `lab serve` printed another one.
let server = "http://127.0.0.1:8080/fixtures"

enum DownloadFailure: Error {
    case status(Int)
}

/// A response is not an error, whatever its status: a 404 returns normally, page and all.
func requireOK(_ response: URLResponse) throws {
    let status = (response as? HTTPURLResponse)?.statusCode ?? 0
    guard status == 200 else { throw DownloadFailure.status(status) }
}

//: ## 1. `data(from:)`: the whole body in memory, then one write
//: Try `?size=8MiB&faults=status:404` and see the check at work; without it, the 42-byte error
//: page would be saved as the file.
func downloadInMemory(_ url: URL, to file: URL) async throws {
    let (data, response) = try await URLSession.shared.data(from: url)
    try requireOK(response)
    try data.write(to: file)
    print("data(from:): \(data.count) bytes, all of them in memory at once")
}

//: ## 2. `download(from:)`: Foundation writes a file, the caller moves it
//: The returned file is the caller's to move or delete, on every platform. On Linux a download
//: that fails also leaves its partial file in the temporary folder, under a name nobody is told.
func downloadToFile(_ url: URL, to file: URL) async throws {
    let (location, response) = try await URLSession.shared.download(from: url)
    defer { try? FileManager.default.removeItem(at: location) }
    try requireOK(response)
    try? FileManager.default.removeItem(at: file)
    try FileManager.default.moveItem(at: location, to: file)
    print("download(from:): moved \(location.lastPathComponent) into place")
}

//: ## 3. Two files at once: a task group
//: Each child task downloads one file. If one throws, the group cancels the other, and
//: cancelling a Task cancels its URLSession task. Try `big` (throttled, so it takes seconds) with a
//: 404 for the other, and see the big one stop at once.
func downloadBoth(_ first: URL, _ second: URL, into folder: URL) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for (index, url) in [first, second].enumerated() {
            group.addTask {
                try await downloadToFile(url, to: folder.appendingPathComponent("file-\(index).bin"))
            }
        }
        try await group.waitForAll()
    }
}

//: ## 4. Cancelling is how an async download pauses
//: `data(from:)` keeps nothing when it is cancelled: a Pause that keeps its bytes needs the body
//: as it arrives, which is what `bytes(for:)` gives (section 5, and the lesson's corrected code).
func cancelHalfway(_ url: URL) async {
    let transfer = Task { try await URLSession.shared.data(from: url) }
    try? await Task.sleep(for: .milliseconds(100))
    transfer.cancel()
    do {
        _ = try await transfer.value
        print("finished before the cancel")
    } catch {
        print("cancelled: \(error.localizedDescription); nothing was kept")
    }
}

//: ## 5. `bytes(for:)`: the body as it arrives
//: Apple's platforms have it since 2021; Foundation on Linux does not, and there the lesson uses
//: LabKit's, under the same names. Bytes written as they come keep memory flat, and what is on
//: disk when the transfer breaks can be resumed with `Range`. One step per byte is slow: the
//: lesson's default reads whole chunks with LabKit's `bodyChunks(for:)`, which needs LabKit.
#if canImport(Darwin)
func downloadStreaming(_ url: URL, to file: URL) async throws {
    let (bytes, response) = try await URLSession.shared.bytes(from: url)
    try requireOK(response)
    FileManager.default.createFile(atPath: file.path, contents: nil)
    let handle = try FileHandle(forWritingTo: file)
    defer { try? handle.close() }
    // One step per byte: simple, and about 9 times slower than chunks even in a release build
    // (see the lesson page). An array, because `Data.append` of one byte costs three times more.
    var buffer: [UInt8] = []
    buffer.reserveCapacity(64 << 10)
    for try await byte in bytes {
        buffer.append(byte)
        if buffer.count == 64 << 10 {
            try handle.write(contentsOf: Data(buffer))
            buffer.removeAll(keepingCapacity: true)
        }
    }
    try handle.write(contentsOf: Data(buffer))
}
#endif

//: ## Run them
//: A playground stops when its last line has run, and the downloads are not done by then: they run
//: in a `Task`, and the page is told to keep going until the Task says it has finished.
#if canImport(PlaygroundSupport)
import PlaygroundSupport
PlaygroundPage.current.needsIndefiniteExecution = true
#endif

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lesson-08-playground")
let small = URL(string: "\(server)/demo?size=8MiB")!
let big = URL(string: "\(server)/big?size=512MiB&faults=throttle:32MiB")!

Task {
    do {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try await downloadInMemory(small, to: folder.appendingPathComponent("in-memory.bin"))
        try await downloadToFile(small, to: folder.appendingPathComponent("download.bin"))
        try await downloadBoth(small, URL(string: "\(server)/other?size=4MiB")!, into: folder)
        await cancelHalfway(big)
        #if canImport(Darwin)
        try await downloadStreaming(small, to: folder.appendingPathComponent("streamed.bin"))
        #endif
    } catch {
        print("stopped: \(error)")
    }
    #if canImport(PlaygroundSupport)
    PlaygroundPage.current.finishExecution()
    #endif
}
