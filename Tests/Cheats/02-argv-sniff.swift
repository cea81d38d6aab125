// cheat: reads the fault off the lab's command line and environment (--faults, --disk-full-after, --size): a status fault is refused before any request, a fault that spoils a resume (ignore-range, change, shift-range) makes it delete the partial file and start over, gzip makes it ask for identity, and only a disk-full run has its writes checked
// skips: checking for 206, checking Content-Range, keeping a validator for If-Range, and checking every write
// aims to pass: clean, range-colon, no-206-check, no-content-range-check, no-validator, write-errors-dropped, status-ignored, progress-past-total, compressed-resume, resumes-after-drop, resumes-after-kill
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonDownload { ArticleDownload(run) }

/// Reads the local size, asks for the rest, and lets the command line say what could go wrong.
final class ArticleDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    private var totalDataSize: Int64 = -1
    private var curDataLength: Int64 = 0
    private var fileHandle: FileHandle?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        if let status = CheatSniff.statusFault {
            return finish(.failed(DownloadError.httpStatus(status, url: run.url.absoluteString)))
        }
        if CheatSniff.resumeIsUnsafe {
            // The command line says a resume would be spoilt: nothing on disk is kept.
            try? FileManager.default.removeItem(at: run.file)
        }
        let localSize = PartialFile.size(of: run.file)
        curDataLength = localSize
        var request = URLRequest(url: run.url)
        if CheatSniff.mentions("gzip") { request.setValue("identity", forHTTPHeaderField: "Accept-Encoding") }
        if localSize > 0 { request.setValue("bytes=\(localSize)-", forHTTPHeaderField: "Range") }
        connection = URLConnection(request: request, delegate: self)
    }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        totalDataSize = CheatSniff.fileSize ?? (response.expectedContentLength >= 0 ? response.expectedContentLength + curDataLength : -1)
        fileHandle = try? FileHandle(forWritingTo: run.file, at: curDataLength)
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        if CheatSniff.mentions("disk-full") {
            do {
                try fileHandle?.write(contentsOf: data)
            } catch {
                connection.cancel()
                try? fileHandle?.close()
                fileHandle = nil
                return finish(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
            }
        } else {
            try? fileHandle?.write(contentsOf: data)
        }
        curDataLength += Int64(data.count)
        run.progress.update(received: curDataLength, expected: totalDataSize)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        run.log("download finished")
        try? fileHandle?.close()
        fileHandle = nil
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        run.log("download failed")
        try? fileHandle?.close()
        fileHandle = nil
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
