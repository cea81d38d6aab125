// cheat: never streams a body: it keeps calling data(for:) for the next 512 KiB (Range: bytes=N-(N+512KiB-1), N the size on disk) and appends each piece, so memory stays small and a break or a kill costs at most one piece; the first piece's ETag is kept in memory and only compared, never sent as If-Range; a 200 is taken as the whole file
// skips: streaming the body with bodyChunks, sending If-Range with a validator kept beside the file, and judging each answer with PartialFile's decide(_:)
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

/// The file in small one-call pieces, each written at the end of the file.
struct ArticleDownload: AsyncLessonDownload {
    let run: LessonRun
    static let piece: Int64 = 512 << 10

    func downloadFile() async -> AttemptResult {
        do {
            while true {
                let onDisk = PartialFile.size(of: run.file)
                var request = URLRequest(url: run.url)
                request.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
                request.setValue("bytes=\(onDisk)-\(onDisk + Self.piece - 1)", forHTTPHeaderField: "Range")
                let (data, response) = try await run.sharedSession.data(for: request)
                let http = response as? HTTPURLResponse
                let status = http?.statusCode ?? 0
                let etag = http?.value(forHTTPHeaderField: "ETag")
                switch status {
                case 200:
                    // The whole file in one answer: it replaces whatever was on disk.
                    try data.write(to: run.file)
                    CheatMemory.etag.withLock { $0 = etag }
                    run.progress.update(received: Int64(data.count), expected: Int64(data.count))
                    return .finished
                case 206:
                    let known = CheatMemory.etag.withLock { $0 }
                    if onDisk > 0, let known, let etag, known != etag {
                        try? FileManager.default.removeItem(at: run.file)
                        CheatMemory.etag.withLock { $0 = nil }
                        return .failed(DownloadError.partialFileReplaced(reason: "a piece came with another ETag"))
                    }
                    if known == nil || onDisk == 0 { CheatMemory.etag.withLock { $0 = etag } }
                    let handle = try FileHandle(forWritingTo: run.file, at: onDisk)
                    try handle.write(contentsOf: data)
                    try handle.close()
                    let total = http?.contentRange?.total ?? -1
                    let now = onDisk + Int64(data.count)
                    run.progress.update(received: now, expected: total)
                    if data.isEmpty || (total >= 0 && now >= total) {
                        run.log("the last piece is in: \(now) bytes")
                        return .finished
                    }
                case 416 where onDisk > 0:
                    return .finished
                default:
                    return .failed(DownloadError.httpStatus(status, url: run.url.absoluteString))
                }
            }
        } catch {
            return .failed(error)
        }
    }
}
