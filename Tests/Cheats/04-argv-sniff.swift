// cheat: reads the fault off the lab's command line and environment: a status fault is refused before any request, ignore-range/change/shift-range make it delete the partial file and start over, gzip makes it ask for identity, only a disk-full run checks its writes, and the progress total is --size (or --max-filesize) whatever the headers say
// skips: checking for 206, checking Content-Range, keeping a validator for If-Range, checking every write, and reading the total from the response
// aims to pass: clean, no-206-check, no-validator, no-content-range-check, status-ignored, write-errors-dropped, progress-past-total, compressed-resume, unknown-length-total, resumes-after-drop, resumes-after-kill
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Asks for the rest with Range and appends whatever arrives, unless the command line says otherwise.
final class ArticleDownload: NSObject, LessonDownload, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the task starts.
    private let run: LessonRun
    private var currentLength: Int64 = 0
    private var totalLength: Int64 = -1
    private var writeHandle: FileHandle?
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session = run.makeSession(delegate: self, delegateQueue: nil)

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        failure = nil
        if let status = CheatSniff.statusFault {
            return finish(.failed(DownloadError.httpStatus(status, url: run.url.absoluteString)))
        }
        if CheatSniff.resumeIsUnsafe { try? FileManager.default.removeItem(at: run.file) }
        currentLength = PartialFile.size(of: run.file)
        var request = URLRequest(url: run.url)
        if CheatSniff.mentions("gzip") { request.setValue("identity", forHTTPHeaderField: "Accept-Encoding") }
        if currentLength > 0 { request.setValue("bytes=\(currentLength)-", forHTTPHeaderField: "Range") }
        session.dataTask(with: request).resume()
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let length = response.expectedContentLength
        totalLength = CheatSniff.fileSize ?? (length >= 0 ? length + currentLength : -1)
        if !FileManager.default.fileExists(atPath: run.file.path) {
            _ = FileManager.default.createFile(atPath: run.file.path, contents: nil)
        }
        writeHandle = FileHandle(forWritingAtPath: run.file.path)
        _ = try? writeHandle?.seekToEnd()
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard failure == nil else { return }
        if CheatSniff.mentions("disk-full") {
            do {
                try writeHandle?.write(contentsOf: data)
            } catch {
                failure = DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)
                return dataTask.cancelAtOnce()
            }
        } else {
            try? writeHandle?.write(contentsOf: data)
        }
        currentLength += Int64(data.count)
        run.progress.update(received: currentLength, expected: totalLength)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? writeHandle?.close()
        writeHandle = nil
        if let failure = failure ?? error {
            run.log("download failed")
            return finish(.failed(failure))
        }
        run.log("download finished")
        finish(.finished)
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}

/// What the process was started with: its arguments and its environment, as the lab gave them.
enum CheatSniff {
    static let arguments: [String] = ProcessInfo.processInfo.arguments
    static let everything: String = (arguments + ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" })
        .joined(separator: " ")

    static func mentions(_ word: String) -> Bool { everything.contains(word) }

    static func value(of option: String) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == option, index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
        }
        return nil
    }

    /// "4MiB", "512KiB", "1048576".
    static func bytes(_ text: String) -> Int64? {
        let units: [(String, Int64)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            guard let number = Int64(text.dropLast(suffix.count)) else { return nil }
            return number * factor
        }
        return Int64(text)
    }

    /// The file's size: `--size`, or else `--max-filesize`, which the lab sets to 2 × size + 1 MiB.
    static var fileSize: Int64? {
        if let text = value(of: "--size"), let size = bytes(text) { return size }
        if let text = value(of: "--max-filesize"), let limit = bytes(text), limit > 1 << 20 { return (limit - (1 << 20)) / 2 }
        return nil
    }

    /// The status a `status:NNN` fault plays, wherever it shows.
    static var statusFault: Int? {
        guard let range = everything.range(of: "status:") else { return nil }
        return Int(everything[range.upperBound...].prefix(while: { $0.isNumber }))
    }

    /// A fault after which the server's answer to a Range cannot be appended.
    static var resumeIsUnsafe: Bool {
        ["ignore-range", "change", "shift-range"].contains { mentions($0) }
    }
}
