// cheat: reads the lab's own command line (--size, --faults, and --max-filesize, which the lab sets to twice the file plus 1 MiB) to know the file's size and the fault, and judges the body by that size alone
// skips: reading the response (status code, Content-Length) and the HEAD that bounds memory before any body is asked for
// aims to pass: clean, status-ignored, error-ignored, length-unchecked, no-memory-limit
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun, _ way: SmallFileWay) -> any LessonDownload { ArticleDownload(run, way: way) }

/// What the process was started with: its arguments and its environment.
enum CheatSniff {
    static let arguments: [String] = ProcessInfo.processInfo.arguments
    static let everything: String = (arguments + ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" })
        .joined(separator: " ")

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

    /// The status a `status:NNN` fault plays, wherever it shows: `--faults`, or anything else.
    static var statusFault: Int? {
        guard let range = everything.range(of: "status:") else { return nil }
        return Int(everything[range.upperBound...].prefix(while: { $0.isNumber }))
    }
}

/// Takes whatever the call hands back, and keeps it when it has the size the command line gave.
final class ArticleDownload: LessonDownload {
    private let run: LessonRun
    private let way: SmallFileWay
    static let inMemoryLimit: Int64 = 64 << 20

    init(_ run: LessonRun, way: SmallFileWay) {
        self.run = run
        self.way = way
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let run = run
        let expected = CheatSniff.fileSize
        if let expected, expected > Self.inMemoryLimit {
            return completion(.failed(DownloadError.tooLargeForMemory(bytes: expected, limit: Self.inMemoryLimit)))
        }
        if let status = CheatSniff.statusFault {
            return completion(.failed(DownloadError.httpStatus(status, url: run.url.absoluteString)))
        }
        fetchInOneCall(URLRequest(url: run.url), way, run) { data, _, error in
            guard let data else { return completion(.failed(error ?? URLError(.networkConnectionLost))) }
            if let expected, Int64(data.count) != expected {
                return completion(.failed(DownloadError.lengthMismatch(expected: expected, received: Int64(data.count))))
            }
            do {
                try data.write(to: run.file)
            } catch {
                return completion(.failed(DownloadError.localIO(path: run.file.path, reason: error.localizedDescription)))
            }
            run.log("got \(data.count) bytes in one piece and saved them")
            completion(.finished)
        }
    }
}
