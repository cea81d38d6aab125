// cheat: reads the fault off the lab's command line and environment: a status fault is refused before any request, ignore-range/change/shift-range make it delete what is on disk (a whole file too) and start over, gzip makes it ask for identity, and only a disk-full run looks at what write returns; the total comes from --size, so no HEAD is sent
// skips: checking for 206, checking Content-Range, keeping a validator, and knowing when a file of the server's size is really the server's
// aims to pass: clean, no-206-check, no-content-range-check, no-validator, same-size-is-complete, write-result-ignored, status-ignored, extra-head, progress-past-total, compressed-resume, resumes-after-drop, resumes-after-kill
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Reads the local size, appends whatever arrives, and lets the command line say what could go wrong.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var fileSize: Int64 = -1
    private var currentSize: Int64 = 0
    private var output: OutputStream?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        if let status = CheatSniff.statusFault {
            return finish(.failed(DownloadError.httpStatus(status, url: run.url.absoluteString)))
        }
        if CheatSniff.resumeIsUnsafe { try? FileManager.default.removeItem(at: run.file) }
        currentSize = PartialFile.size(of: run.file)
        fileSize = CheatSniff.fileSize ?? -1
        if fileSize > 0, currentSize == fileSize {
            run.log("the file is already downloaded; not downloading it again")
            return finish(.finished)
        }
        if fileSize > 0, currentSize > fileSize {
            try? FileManager.default.removeItem(at: run.file)
            currentSize = 0
        }
        var request = URLRequest(url: run.url)
        if CheatSniff.mentions("gzip") { request.setValue("identity", forHTTPHeaderField: "Accept-Encoding") }
        if currentSize > 0 { request.setValue("bytes=\(currentSize)-", forHTTPHeaderField: "Range") }
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        if fileSize < 0, response.expectedContentLength >= 0 { fileSize = currentSize + response.expectedContentLength }
        output = OutputStream(toFileAtPath: run.file.path, append: true)
        output?.open()
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let output else { return }
        if CheatSniff.mentions("disk-full") {
            var offset = 0
            while offset < data.count {
                let count = output.write(data.dropFirst(offset))
                guard count > 0 else {
                    connection.cancel()
                    output.close()
                    self.output = nil
                    return finish(.failed(DownloadError.localIO(path: run.file.path, reason: "the disk is full")))
                }
                offset += count
            }
        } else {
            _ = output.write(data)
        }
        currentSize += Int64(data.count)
        run.progress.update(received: currentSize, expected: fileSize)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        output?.close()
        output = nil
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed, please download again")
        output?.close()
        output = nil
        finish(.failed(error))
    }

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
