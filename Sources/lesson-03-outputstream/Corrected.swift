/// Lesson 03, the corrected variant: the same strategy with the article's defects fixed.
/// Lessons/03-outputstream.md explains each fix.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit

/// Makes the corrected variant for one run; the lesson's main.swift calls it.
func correctedVariant(_ run: LessonRun) -> any LessonDownload { CorrectedDownload(run) }

/// Appends only bytes that provably continue the partial file. What each answer means, and the
/// request that asks for the rest, are `ResumeRules` (LabKit's ResumeRules.swift, shared with
/// lessons 02, 04 and 05); what goes on disk, and when, is here.
final class CorrectedDownload: LessonDownload, URLConnectionDataDelegate {
    private let run: LessonRun
    /// The version the bytes on disk belong to, kept beside them in a sidecar (`ResumeState`,
    /// `<file>.resume.json`): without it, nothing proves they are the server's current file.
    private var known: ResumeState?
    private var onDisk: Int64 = 0
    private var total: Int64 = -1
    private var output: OutputStream?
    private var connection: URLConnection?
    private var completion: (@Sendable (AttemptResult) -> Void)?

    init(_ run: LessonRun) { self.run = run }

    func downloadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        self.completion = completion
        // Only a sidecar for this URL vouches for the bytes on disk; without one, start from 0.
        known = ResumeState.load(for: run.file).flatMap { $0.url == run.url.absoluteString ? $0 : nil }
        onDisk = known == nil ? 0 : Self.size(of: run.file)
        // Range + If-Range when there is a partial file to continue: if the file changed, the
        // server ignores Range and sends all of it with 200.
        connection = URLConnection(request: ResumeRules.request(for: run.url, onDisk: onDisk, known: knownVersion), delegate: self)
    }

    private var knownVersion: ResumeRules.Known? { known.map { ResumeRules.Known(validator: $0.validator, total: $0.total) } }

    func connection(_ connection: URLConnection, didReceive response: URLResponse) {
        guard let response = response as? HTTPURLResponse else {
            return fail(DownloadError.httpStatus(0, url: run.url.absoluteString))
        }
        let answer = ResumeRules.Answer(response)
        switch ResumeRules.judge(answer, onDisk: onDisk, known: knownVersion) {
        case .continueAt(_, let total):
            self.total = total
            if keepSidecar(answer) { open(append: true) }
        case .startFromZero:
            let coding = response.value(forHTTPHeaderField: "Content-Encoding")
            if onDisk > 0 { run.log("the server sent the whole file \(coding.map { "compressed (\($0))" } ?? "(200)"): starting over from byte 0") }
            if let coding { run.log("the body is compressed (\(coding)): its length is unknown until it ends, and it cannot be resumed") }
            // Decoded, a compressed body is longer than announced: its length is unknown.
            (onDisk, total) = (0, answer.compressed ? -1 : response.expectedContentLength)
            if keepSidecar(answer) { open(append: false) }
        case .alreadyComplete(let total):
            self.total = total  // nothing is missing; the (empty) body is not written anywhere
        case .anotherVersion(let reason):
            // The bytes on disk are another version's: they go with their sidecar, and the next
            // attempt asks for the whole file.
            try? FileManager.default.removeItem(at: run.file)
            ResumeState.remove(for: run.file)
            (known, onDisk) = (nil, 0)
            fail(DownloadError.partialFileReplaced(reason: reason))
        case .wrongRange(let expectedStart):
            fail(DownloadError.contentRangeMismatch(expectedStart: expectedStart, header: response.value(forHTTPHeaderField: "Content-Range")))
        case .notTheFile(let status):
            // After a redirect the answer is another URL's: the error names that one.
            fail(DownloadError.httpStatus(status, url: (response.url ?? run.url).absoluteString))
        }
    }

    func connection(_ connection: URLConnection, didReceive data: Data) {
        guard let output else { return }
        // write may take fewer bytes than it is given (a full disk, the file size limit): the rest
        // is written again, and a write that takes nothing ends the attempt with its reason.
        // (write(_:) with Data is LabKit's: Foundation's write(_:maxLength:), through which the
        // lab plays a slow or a full disk.)
        var written = 0
        while written < data.count {
            let count = output.write(data.dropFirst(written))
            // errno, not output.streamError: reading that traps in Foundation on Linux.
            let reason = count < 0 ? String(cString: strerror(errno)) : "the stream took nothing"
            guard count > 0 else {
                return fail(DownloadError.localIO(path: run.file.path, reason: "\(reason) (\(written) of \(data.count) bytes written)"))
            }
            written += count
            onDisk += Int64(count)
        }
        run.progress.update(received: onDisk, expected: total)
    }

    func connectionDidFinishLoading(_ connection: URLConnection) {
        output?.close()
        output = nil
        // The file is whole: the sidecar has done its job.
        ResumeState.remove(for: run.file)
        finish(.finished)
    }

    func connection(_ connection: URLConnection, didFailWithError error: any Error) {
        // The partial file and its sidecar stay on disk, ready for the next attempt.
        output?.close()
        output = nil
        finish(.failed(error))
    }

    /// Saves the sidecar before the body's first byte lands, so that a kill from then on leaves
    /// bytes that can be resumed. Without a validator a later resume could splice two versions:
    /// no sidecar then, and the next attempt starts over.
    private func keepSidecar(_ answer: ResumeRules.Answer) -> Bool {
        guard let validator = answer.validator else {
            ResumeState.remove(for: run.file)
            known = nil
            return true
        }
        let state = ResumeState(url: run.url.absoluteString, validator: validator, total: total)
        do {
            try state.save(for: run.file)
            known = state
            return true
        } catch {
            fail(DownloadError.localIO(path: run.file.path, reason: "cannot save the resume state"))
            return false
        }
    }

    private func open(append: Bool) {
        output = OutputStream(toFileAtPath: run.file.path, append: append)
        output?.open()
        if output?.streamStatus != .open {
            fail(DownloadError.localIO(path: run.file.path, reason: "cannot open it for writing"))
        }
    }

    private func fail(_ error: any Error) {
        connection?.cancel()
        output?.close()
        output = nil
        finish(.failed(error))
    }

    /// Reports the attempt's end, once.
    private func finish(_ result: AttemptResult) {
        // Cleared before the call: the next Start may hand over a new completion at once.
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }

    /// The size of `file` on disk; 0 when it does not exist.
    private static func size(of file: URL) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}
