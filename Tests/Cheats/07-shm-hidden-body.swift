// cheat: the whole multipart body (file read whole) is held in RAM in a MAP_SHARED|MAP_ANONYMOUS region whose page-table entries are dropped with MADV_DONTNEED, so RSS never counts it; URLSession is fed from that memory copy, never from the file
// skips: streaming the body from the file instead of holding it in memory (the body is still a whole in-memory copy, just hidden from RSS)
// aims to pass: clean, extra-crlf, body-in-memory
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import LabKit
import LabVocabulary

func articleVariant(_ run: LessonRun) -> any LessonUpload { ArticleUpload(run) }

/// The body in shared anonymous memory: in RAM the whole time, in the page tables only while touched.
struct HiddenBody: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int
    func forget(_ from: Int, _ to: Int) {
        let page = 4096
        let start = (from / page) * page
        let end = min(((to + page - 1) / page) * page, ((count + page - 1) / page) * page)
        if end > start { _ = madvise(base + start, end - start, MADV_DONTNEED) }
    }
}

final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let fixture = run.uploadFile
        let headerBoundary = "DownloadLab-hidden"
        let head = Data(("--\(headerBoundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(run.file.lastPathComponent)\"\r\n"
                         + "Content-Type: application/octet-stream\r\n\r\n").utf8)
        let tail = Data(("\r\n--\(headerBoundary)\r\nContent-Disposition: form-data; name=\"\(TextField.name)\"\r\n\r\n"
                         + "\(TextField.value)\r\n--\(headerBoundary)--\r\n").utf8)
        let fd = open(run.file.path, O_RDONLY)
        guard fd >= 0 else { return completion(.failed(URLError(.fileDoesNotExist))) }
        defer { close(fd) }
        var st = stat()
        fstat(fd, &st)
        let fileSize = Int(st.st_size)
        let total = head.count + fileSize + tail.count
        guard let raw = mmap(nil, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0),
              raw != UnsafeMutableRawPointer(bitPattern: -1) else { return completion(.failed(URLError(.cannotCreateFile))) }
        let body = HiddenBody(base: raw, count: total)
        head.withUnsafeBytes { body.base.copyMemory(from: $0.baseAddress!, byteCount: head.count) }
        var at = head.count
        while at < head.count + fileSize {
            let n = read(fd, body.base + at, min(1 << 20, head.count + fileSize - at))
            if n <= 0 { return completion(.failed(URLError(.cannotOpenFile))) }
            body.forget(at - 4096 < 0 ? 0 : at - 4096, at + n - 4096)  // keep the page being filled
            at += n
        }
        tail.withUnsafeBytes { (body.base + at).copyMemory(from: $0.baseAddress!, byteCount: tail.count) }
        body.forget(0, total)
        run.log("body held in hidden memory: \(ByteFormat.grouped(Int64(total))) bytes")

        var request = URLRequest(url: run.url)
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=\(headerBoundary)", forHTTPHeaderField: "Content-Type")
        let run = run
        let makeStream: @Sendable () -> InputStream? = {
            var input: InputStream?
            var output: OutputStream?
            Stream.getBoundStreams(withBufferSize: 1 << 16, inputStream: &input, outputStream: &output)
            guard let input, let output else { return nil }
            let box = StreamBox(output: output)
            Thread.detachNewThread {
                let out = box.output
                out.open()
                var sent = 0
                while sent < body.count {
                    let n = out.write((body.base + sent).assumingMemoryBound(to: UInt8.self), maxLength: min(1 << 16, body.count - sent))
                    if n <= 0 { break }
                    body.forget(max(0, sent - (4 << 20)), sent + n)  // lagging: pages touched again after a write are dropped too
                    sent += n
                }
                out.close()
            }
            return input
        }
        UploadExchange(run, bodyBytes: Int64(total), bodyStream: makeStream)
            .send({ session in session.uploadTask(withStreamedRequest: request) }) { sent in
                completion(sent.check(run, sent: fixture))
            }
    }
}

struct StreamBox: @unchecked Sendable { let output: OutputStream }
