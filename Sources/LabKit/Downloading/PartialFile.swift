import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary

/// The resume rules every corrected lesson follows, whatever it writes with (FileHandle,
/// OutputStream, a session delegate): which request asks for the rest of a partial file, and
/// what each answer means for the bytes already on disk.
///
/// The contract:
/// - A partial file is resumed only together with its sidecar (`ResumeState`), and only for the
///   same URL. Without one, the download starts from byte 0.
/// - `nextRequest()` asks for the rest with `Range: bytes=N-` and `If-Range: <validator>`, so a
///   server whose file has changed answers 200 with all of it instead of a 206 to splice. Every
///   request asks for `Accept-Encoding: identity`, as curl and aria2 do: URLSession hands over a
///   compressed body decoded, so the bytes on disk are no offset into what the server sends.
/// - A body that comes compressed all the same is written whole from byte 0, with its total
///   unknown, and leaves no sidecar: the next attempt starts over.
/// - `decide(_:)` follows `ResumeRules`: a 206 only if its `Content-Range` starts exactly at the
///   end of the partial file and, on a resume, its validator and total are the ones the sidecar
///   knew (a server that ignores `If-Range` may answer a 206 for a new version); a 200 as "start
///   over from byte 0"; a 416 as "already complete" only if its length is the file's and it names
///   no other validator; anything else refused.
/// - A 206 or a 416 for another version of the file deletes the partial file and its sidecar
///   and ends the attempt (`DownloadError.partialFileReplaced`): the next attempt starts from
///   byte 0, and `--max-attempts` bounds how often that can happen.
/// - The sidecar is saved before the first byte of a response lands, and removed by `finished()`.
public final class PartialFile {
    public let url: URL
    public let file: URL
    private let log: @Sendable (String) -> Void
    private let reportProgress: @Sendable (_ received: Int64, _ expected: Int64) -> Void
    /// Bytes on disk that belong to the resource.
    public private(set) var written: Int64 = 0
    /// The length of the whole resource, or -1 while unknown.
    public private(set) var total: Int64 = -1
    private var resumeState: ResumeState?

    /// The partial `file` of the resource at `url`. Decisions that throw bytes away are told
    /// through `log`; the bytes on disk, as they grow, through `reportProgress`.
    public init(url: URL, file: URL, log: @escaping @Sendable (String) -> Void,
                reportProgress: @escaping @Sendable (_ received: Int64, _ expected: Int64) -> Void) {
        self.url = url
        self.file = file
        self.log = log
        self.reportProgress = reportProgress
    }

    /// What to do with the body that follows a response.
    public enum Decision {
        /// A 206 that continues the file: write its body at `offset`, the current end.
        case append(at: Int64)
        /// A 200: the whole resource follows; truncate the file and write from byte 0.
        case replace
        /// A 416 for a file that is already whole: write nothing.
        case complete
        /// Not a body to write: end the attempt with this error. A 404, a 206 for the wrong range,
        /// no room for the sidecar; or a 206 or 416 for another version of the file, after which
        /// the partial file is gone and the next attempt starts from byte 0.
        case reject(DownloadError)
    }

    /// The request for whatever is missing, based on what is on disk now.
    public func nextRequest() -> URLRequest {
        resumeState = ResumeState.load(for: file).flatMap { $0.url == url.absoluteString ? $0 : nil }
        written = resumeState == nil ? 0 : Self.size(of: file)
        return ResumeRules.request(for: url, onDisk: written,
                                   known: resumeState.map { ResumeRules.Known(validator: $0.validator, total: $0.total) })
    }

    /// The answer judged by `ResumeRules`, and acted on: the sidecar saved for a body that can be
    /// resumed later, removed for one that cannot, the partial file deleted for another version.
    public func decide(_ response: URLResponse) -> Decision {
        guard let response = response as? HTTPURLResponse else {
            return .reject(.httpStatus(0, url: url.absoluteString))
        }
        let known = resumeState.map { ResumeRules.Known(validator: $0.validator, total: $0.total) }
        switch ResumeRules.judge(ResumeRules.Answer(response), onDisk: written, known: known) {
        case .continueAt(let offset, let total):
            self.total = total
            return keepingTheSidecar(for: response, .append(at: offset))
        case .startFromZero:
            let coding = response.contentEncoding
            if written > 0 { log("the server sent the whole file \(coding.map { "compressed (\($0))" } ?? "(200)"): starting over from byte 0") }
            if let coding { log("the body is compressed (\(coding)): its length is unknown until it ends, and it cannot be resumed") }
            written = 0
            total = response.expectedDecodedLength
            return keepingTheSidecar(for: response, .replace)
        case .alreadyComplete(let total):
            self.total = total
            return .complete
        case .anotherVersion(let reason):
            return startOver(because: reason)
        case .wrongRange(let expectedStart):
            return .reject(.contentRangeMismatch(expectedStart: expectedStart, header: response.value(forHTTPHeaderField: "Content-Range")))
        case .notTheFile(let status):
            // After a redirect the answer is another URL's: the error names that one.
            return .reject(.httpStatus(status, url: (response.url ?? url).absoluteString))
        }
    }

    /// Saves the sidecar before the body's first byte lands. Without a validator a later resume
    /// could splice two versions: no sidecar then.
    private func keepingTheSidecar(for response: HTTPURLResponse, _ decision: Decision) -> Decision {
        guard let validator = response.resumeValidator else {
            ResumeState.remove(for: file)
            resumeState = nil
            return decision
        }
        do {
            let state = ResumeState(url: url.absoluteString, validator: validator, total: total)
            try state.save(for: file)
            resumeState = state
        } catch {
            return .reject(.localIO(path: file.path, reason: "cannot save the resume state"))
        }
        return decision
    }

    /// Deletes the partial file and its sidecar, which belong to another version of the file, and
    /// ends the attempt: the next one asks for the whole file.
    private func startOver(because reason: String) -> Decision {
        try? FileManager.default.removeItem(at: file)
        ResumeState.remove(for: file)
        resumeState = nil
        written = 0
        return .reject(.partialFileReplaced(reason: reason))
    }

    /// A handle that writes the file from `offset` on, the offset `decide(_:)` gave: the file is
    /// created if need be, and anything after `offset` is cut off. A file that cannot be opened
    /// is a local error.
    public func openForWriting(at offset: Int64) throws -> FileHandle {
        do {
            return try FileHandle(forWritingTo: file, at: offset)
        } catch {
            let reason = switch (error as? POSIXError)?.code {
            case .ELOOP?: "a symbolic link is in its place, and no file is written through one"
            case .EMLINK?: "it has another name (a hard link), and no file is written through one"
            default: systemReason(of: error)
            }
            throw DownloadError.localIO(path: file.path, reason: "cannot open it for writing: \(reason)")
        }
    }

    /// Counts `count` more bytes written at the end of the file.
    public func didWrite(_ count: Int) { written += Int64(count) }

    /// Writes `data` at the end of the partial file through `output`, counts it and shows the
    /// progress. A write may take fewer bytes than it was given (the disk filled up, the file
    /// reached its size limit): the rest is written again, and the write that fails says why.
    public func append(_ data: Data, through output: OutputStream) throws {
        var offset = 0
        while offset < data.count {
            let count = output.write(data.dropFirst(offset))
            // errno, not output.streamError: reading that traps in Foundation on Linux.
            let cause = POSIXErrorCode(rawValue: errno) ?? .EIO
            guard count > 0 else {
                let reason = count < 0 ? systemReason(of: POSIXError(cause)) : "the stream took nothing"
                throw DownloadError.localIO(path: file.path, reason: "\(reason) (\(offset) of \(data.count) bytes written)")
            }
            didWrite(count)
            offset += count
        }
        reportProgress(written, total)
    }

    /// The same through a file handle, whose write throws instead of coming up short.
    public func append(_ data: Data, through handle: FileHandle) throws {
        do {
            try handle.write(contentsOf: data)
        } catch {
            throw DownloadError.localIO(path: file.path, reason: error.localizedDescription)
        }
        didWrite(data.count)
        reportProgress(written, total)
    }

    /// The file is whole: the sidecar has done its job.
    public func finished() { ResumeState.remove(for: file) }

    /// The size of `file` on disk; 0 when it does not exist.
    public static func size(of file: URL) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        return (attributes?[.size] as? NSNumber)?.int64Value ?? 0
    }
}

extension FileHandle {
    /// A handle for writing `file` from `offset` on: the file is created if it does not exist
    /// (`FileHandle(forWritingAtPath:)` alone is nil then), and anything after `offset` is cut
    /// off, so a 200 (offset 0) replaces the file and a checked 206 continues it.
    ///
    /// A file that ends at `offset` or before is not truncated, only positioned: on ext4, a file
    /// truncated to size 0 has all its data flushed when it is closed ("auto_da_alloc", meant
    /// for programs that replace a file in place), and that close took 0.4 s after 1 GiB.
    ///
    /// The file is opened in one call that follows no link (`O_NOFOLLOW`): a link planted at the
    /// path, even between a check and the open, makes it fail, and nothing is written through it.
    /// A file that has another name (a hard link) is refused the same way, once open (`EMLINK`).
    public convenience init(forWritingTo file: URL, at offset: Int64) throws {
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        self.init(fileDescriptor: descriptor, closeOnDealloc: true)
        // A file with another name (a hard link) would be written through that name too. The
        // handle, thrown away, closes the descriptor.
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_nlink == 1 else { throw POSIXError(.EMLINK) }
        if try seekToEnd() > UInt64(offset) {
            try truncate(atOffset: UInt64(offset))
        } else {
            try seek(toOffset: UInt64(offset))
        }
    }
}
