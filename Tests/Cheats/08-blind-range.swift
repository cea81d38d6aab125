// cheat: streams with bodyChunks but keeps the ETag only in a global (in memory), so after a kill it sends Range: bytes=<size on disk>- blind, with no If-Range; never reads Content-Range: a 200 replaces the file, any 206 is appended where the file ends
// skips: the sidecar (PartialFile) that proves the bytes on disk after a kill, and the Content-Range check that a 206 starts where the file ends, for the same version
// aims to pass: clean, status-ignored, starts-over, body-in-memory, resumes-after-kill, range-ignored, file-changed
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary
import Synchronization

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any AsyncLessonDownload { ArticleDownload(run: run) }

/// What this process remembers between attempts: in memory, gone with a kill.
enum CheatMemory {
    static let etag = Mutex<String?>(nil)
}

/// The body as it arrives, written to the file; Range from the size on disk, If-Range from memory.
struct ArticleDownload: AsyncLessonDownload {
    let run: LessonRun

    func downloadFile() async -> AttemptResult {
        let onDisk = PartialFile.size(of: run.file)
        let remembered = CheatMemory.etag.withLock { $0 }
        var request = URLRequest(url: run.url)
        request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        if onDisk > 0 {
            request.setValue("bytes=\(onDisk)-", forHTTPHeaderField: "Range")
            if let remembered { request.setValue(remembered, forHTTPHeaderField: "If-Range") }
        }
        do {
            let (chunks, response) = try await run.sharedSession.bodyChunks(for: request)
            let http = response as? HTTPURLResponse
            let status = http?.statusCode ?? 0
            let etag = http?.value(forHTTPHeaderField: "ETag")
            let offset: Int64
            switch status {
            case 200:
                offset = 0
                CheatMemory.etag.withLock { $0 = etag }
            case 206 where onDisk > 0:
                offset = onDisk
            default:
                chunks.cancel()
                return .failed(DownloadError.httpStatus(status, url: run.url.absoluteString))
            }
            let length = response.expectedContentLength
            let total = length >= 0 ? offset + length : -1
            let handle = try FileHandle(forWritingTo: run.file, at: offset)
            defer { try? handle.close() }
            var written = offset
            for try await chunk in chunks {
                try handle.write(contentsOf: chunk)
                written += Int64(chunk.count)
                run.progress.update(received: written, expected: total)
            }
            run.log("the body went to the file as it came: \(written) bytes on disk")
            return .finished
        } catch {
            return .failed(error)
        }
    }
}
