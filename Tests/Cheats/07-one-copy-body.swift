// cheat: keeps the whole body in memory, but as one buffer reserved at its final size and filled from the file 1 MiB at a time, so the peak is one copy of the file instead of three; the extra CRLF is taken out
// skips: streaming the body from disk (a bound stream pair, or a body file) so that memory does not grow with the file
// aims to pass: clean, extra-crlf, body-in-memory
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonUpload { ArticleUpload(run) }

/// The article's body with one CRLF after the file, built in one buffer of the right size.
final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let fixture = run.uploadFile
        let boundary = "DownloadLab-\(UUID().uuidString)"
        let head = Data(("--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"file\"; filename=\"\(run.file.lastPathComponent)\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n").utf8)
        let tail = Data(("\r\n--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"\(TextField.name)\"\r\n\r\n"
            + "\(TextField.value)\r\n"
            + "--\(boundary)--\r\n").utf8)
        let size = Int(PartialFile.size(of: run.file))
        var body = Data()
        body.reserveCapacity(head.count + size + tail.count)
        body.append(head)
        do {
            let reader = try FileHandle(forReadingFrom: run.file)
            defer { try? reader.close() }
            while let piece = try reader.read(upToCount: 1 << 20), !piece.isEmpty {
                body.append(piece)
            }
        } catch {
            return completion(.failed(DownloadError.cannotRead(path: run.file.path, reason: error.localizedDescription)))
        }
        body.append(tail)

        var request = URLRequest(url: run.url)
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        run.log("body built in memory, in one buffer: \(ByteFormat.grouped(Int64(body.count))) bytes")
        let run = run
        UploadExchange(run, bodyBytes: Int64(body.count))
            .send({ session in session.uploadTask(with: request, from: body) }) { sent in
                completion(sent.check(run, sent: fixture))
            }
    }
}
