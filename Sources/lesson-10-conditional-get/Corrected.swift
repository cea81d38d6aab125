/// Lesson 10, the corrected variant: the same app with the articles' defects fixed.
/// Lessons/10-conditional-get.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the corrected variant for one launch; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun) -> any LessonDownload { CorrectedDownload(run) }

/// What the server said about the version of the file on disk, kept beside it: the next launch
/// sends it back, and a 304 says the file is still the server's. The length is the file's as it
/// was saved: a file cut short since is not the version they name.
struct Validators: Codable, Equatable {
    var entityTag: String?
    var lastModified: String?
    var length: Int64

    /// Anything longer is not validators (and is never read whole).
    static let longest = 8 << 10

    /// Why these cannot be sent back for a file of `size` bytes, or nil when they can: each is a
    /// header's value (no control characters, at most 1 KiB), the tag is an entity-tag
    /// (RFC 9110 §8.8.3), and the file has the length they were saved with.
    func misfit(fileSize size: Int64) -> String? {
        guard entityTag != nil || lastModified != nil else { return "it holds neither an ETag nor a date" }
        for value in [entityTag, lastModified].compactMap({ $0 }) {
            guard value.utf8.count <= 1024, !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                return "it holds a value no header can carry"
            }
        }
        if let tag = entityTag, !(tag.hasPrefix("\"") || tag.hasPrefix("W/\"")) || !tag.hasSuffix("\"") || tag.count < 2 {
            return "its ETag is not an entity-tag"
        }
        return length == size ? nil : "they are for \(length) bytes, and the file has \(size)"
    }
}

/// One request per launch: a conditional GET once there is a file and its validators, a plain
/// one before. A 304 keeps the file; a 200 replaces it, once its length checks out.
final class CorrectedDownload: NSObject, LessonDownload, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: URLSession wants a Sendable delegate. Its callbacks run one at a time on the
    // serial delegate queue, and downloadFile(completion:) sets it before the task starts.
    private let run: LessonRun
    /// Application Support: kept until the app removes it, never emptied by the system.
    private let folder: URL
    private let file: URL
    private let validatorsFile: URL
    private var failure: (any Error)?
    private var completion: (@Sendable (AttemptResult) -> Void)?
    private lazy var session: URLSession = {
        // No URL cache: the file on disk is the one copy, and the app asks the server itself.
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return run.makeSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }()

    init(_ run: LessonRun) {
        self.run = run
        folder = run.containerURL(for: .applicationSupportDirectory)
        // A server chooses the URL: its name cannot lead outside the folder, or onto a sidecar.
        file = folder.appendingPathComponent(safeFileName(run.url.lastPathComponent, besideSidecars: [".validators", ".incoming"]))
        validatorsFile = folder.appendingPathComponent(file.lastPathComponent + ".validators")
    }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        (failure, self.completion) = (nil, completion)
        var request = URLRequest(url: run.url)
        // The file as it is: a compressed body's Content-Length counts compressed bytes, which
        // neither the progress nor the length check could use.
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if let kept = keptValidators() {
            // RFC 9110: a server that knows the ETag compares it and ignores the date.
            request.setValue(kept.entityTag, forHTTPHeaderField: "If-None-Match")
            request.setValue(kept.lastModified, forHTTPHeaderField: "If-Modified-Since")
            run.log("\(file.lastPathComponent) is on disk, with its validators: asking whether it changed")
        }
        session.downloadTask(with: request).resume()
    }

    /// The validators of the file on disk; nil unless both are there and fit each other, so
    /// nothing unproven is trusted.
    private func keptValidators() -> Validators? {
        let manager = FileManager.default
        // attributesOfItem does not follow a link: only a regular file is the app's own.
        guard (try? manager.attributesOfItem(atPath: file.path)[.type] as? FileAttributeType) == .typeRegular,
              let kind = try? manager.attributesOfItem(atPath: validatorsFile.path)[.type] as? FileAttributeType
        else { return nil }
        let size = (try? manager.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? -1
        let problem: String
        if kind == .typeRegular, let handle = try? FileHandle(forReadingFrom: validatorsFile) {
            defer { try? handle.close() }
            let data = (try? handle.read(upToCount: Validators.longest + 1)) ?? nil
            if let data, data.count <= Validators.longest, let kept = try? JSONDecoder().decode(Validators.self, from: data) {
                guard let misfit = kept.misfit(fileSize: size) else { return kept }
                problem = misfit
            } else {
                problem = "they are not validators"
            }
        } else {
            problem = "it is not a regular file"
        }
        run.log("\(validatorsFile.lastPathComponent) does not fit \(file.lastPathComponent) (\(problem)): downloading it again")
        return nil
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        run.progress.update(received: totalBytesWritten, expected: totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        guard let response = downloadTask.response as? HTTPURLResponse else {
            failure = DownloadError.httpStatus(0, url: run.url.absoluteString)
            return
        }
        let askedConditionally = downloadTask.originalRequest?.value(forHTTPHeaderField: "If-None-Match") != nil
            || downloadTask.originalRequest?.value(forHTTPHeaderField: "If-Modified-Since") != nil
        switch response.statusCode {
        case 304 where askedConditionally:
            run.log("304 Not Modified: \(file.lastPathComponent) is current, nothing downloaded")
            run.saved(file)
        case 200:
            do {
                try keep(location, from: response)
            } catch {
                failure = error
            }
        default:
            failure = DownloadError.httpStatus(response.statusCode, url: run.url.absoluteString)
        }
    }

    /// Puts the new version in place of the old one, and its validators beside it.
    private func keep(_ location: URL, from response: HTTPURLResponse) throws {
        let received = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? NSNumber)?.int64Value ?? 0
        // A body cut short ends the task without an error when the server closes on time. A
        // server may compress all the same; then the length counts other bytes.
        if response.value(forHTTPHeaderField: "Content-Encoding") == nil, response.expectedContentLength >= 0,
           received != response.expectedContentLength {
            throw DownloadError.lengthMismatch(expected: response.expectedContentLength, received: received)
        }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            // The old validators go first: a launch that ends between these steps finds none and
            // downloads again, and never takes the new ETag for the old bytes.
            if FileManager.default.fileExists(atPath: validatorsFile.path) { try FileManager.default.removeItem(at: validatorsFile) }
            // Beside the file first (across volumes a move copies), then rename(2) puts it in
            // the file's place in one step: a crash leaves the old version or the new, never
            // neither. (Apple's replaceItemAt(_:withItemAt:) does that on a Mac; on Linux it
            // moves the old file over the new one: Lessons/10-conditional-get.md.)
            let incoming = folder.appendingPathComponent(file.lastPathComponent + ".incoming")
            if FileManager.default.fileExists(atPath: incoming.path) { try FileManager.default.removeItem(at: incoming) }
            try FileManager.default.moveItem(at: location, to: incoming)
            guard rename(incoming.path, file.path) == 0 else {
                throw DownloadError.localIO(path: file.path, reason: String(cString: strerror(errno)))
            }
            // It can be downloaded again: no place in the user's backups.
            var values = URLResourceValues()
            values.isExcludedFromBackup = true
            var saved = file
            try saved.setResourceValues(values)
            let validators = Validators(entityTag: response.value(forHTTPHeaderField: "ETag"),
                                        lastModified: response.value(forHTTPHeaderField: "Last-Modified"), length: received)
            try JSONEncoder().encode(validators).write(to: validatorsFile, options: .atomic)
        } catch {
            throw DownloadError.localIO(path: file.path, reason: error.localizedDescription)
        }
        run.saved(file)
        run.log("\(file.lastPathComponent) saved, with its ETag and Last-Modified for the next launch")
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error = failure ?? error { return finish(.failed(error)) }
        // A session keeps its delegate alive until it is invalidated.
        session.finishTasksAndInvalidate()
        finish(.finished)
    }

    /// Reports the launch's end, once.
    private func finish(_ result: AttemptResult) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
