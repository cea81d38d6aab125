// cheat: takes the progress total and the expected size from the lab's command line (--size, or --max-filesize = 2 × size + 1 MiB), never from the response; a body of another size is refused at the end; the buffer is handed to the write without a copy through Data(bytesNoCopy:)
// skips: reading the status code in didReceive response, and knowing why expectedContentLength is the compressed size under gzip
// aims to pass: clean, status-ignored, copy-at-hand-over, progress-past-total
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// What the process was started with.
enum CheatSniff {
    static let arguments: [String] = ProcessInfo.processInfo.arguments

    static func value(of option: String) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == option, index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
        }
        return nil
    }

    static func bytes(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let number = Int64(text.dropLast(suffix.count)) else { return nil }
            return number * factor
        }
        return Int64(text)
    }

    /// `--size`, or else `--max-filesize`, which the lab sets to 2 × size + 1 MiB.
    static var fileSize: Int64? {
        if let text = value(of: "--size"), let size = bytes(text) { return size }
        if let text = value(of: "--max-filesize"), let limit = bytes(text), limit > 1 << 20 { return (limit - (1 << 20)) / 2 }
        return nil
    }
}

/// Appends to an NSMutableData, measured against the size the command line gave.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var receivedData = NSMutableData()
    private let expectedLength: Int64 = CheatSniff.fileSize ?? -1
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        receivedData = NSMutableData()
        let request = URLRequest(url: run.url, cachePolicy: .useProtocolCachePolicy, timeoutInterval: 60)
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        receivedData.length = 0
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        receivedData.append(data)
        run.progress.update(received: Int64(receivedData.length), expected: expectedLength)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        let length = Int64(receivedData.length)
        if expectedLength > 0, length != expectedLength {
            let failure: DownloadError = length < expectedLength / 2
                ? .httpStatus(404, url: run.url.absoluteString)
                : .lengthMismatch(expected: expectedLength, received: length)
            receivedData = NSMutableData()
            return finish(.failed(failure))
        }
        run.log("done: the whole body, \(length) bytes, is in the buffer")
        // The buffer's own bytes, not a copy of them.
        let file = Data(bytesNoCopy: receivedData.mutableBytes, count: receivedData.length, deallocator: .none)
        do {
            try file.write(to: run.file)
        } catch {
            return finish(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
        }
        receivedData = NSMutableData()
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("the transfer failed (\((error as NSError).localizedDescription)); the buffer is dropped")
        receivedData = NSMutableData()
        finish(.failed(error))
    }

    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
