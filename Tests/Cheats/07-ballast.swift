// cheat: the article's whole-body-in-memory upload (CRLFs fixed), plus a touched "ballast" sized K - 3×file, so every run's peak is the same and the big run measures nothing above the clean 1 MiB run
// skips: streaming the body from the file (the body is still read whole and held whole in memory, three copies)
// aims to pass: clean, extra-crlf, body-in-memory
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

func articleVariant(_ run: LessonRun) -> any LessonUpload { ArticleUpload(run) }

/// Kept for the whole run: it pads the small runs up to the big runs' peak.
nonisolated(unsafe) var ballast: UnsafeMutableRawPointer?

final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let fixture = run.uploadFile
        let size = (try? FileManager.default.attributesOfItem(atPath: run.file.path)[.size] as? Int) ?? 0
        let padding = max(0, (160 << 20) - 3 * size)
        if padding > 0 {
            let p = UnsafeMutableRawPointer.allocate(byteCount: padding, alignment: 4096)
            p.initializeMemory(as: UInt8.self, repeating: 0xA5, count: padding)
            ballast = p
        }
        let fileData: Data
        do {
            fileData = try Data(contentsOf: run.file)
        } catch {
            return completion(.failed(error))
        }
        let headerBoundary = "----DownloadLab"
        let delimiter = Data("------DownloadLab".utf8)
        let closeDelimiter = Data("------DownloadLab--".utf8)
        let newLine = Data("\r\n".utf8)

        var body = Data()
        body.append(delimiter)
        body.append(newLine)
        body.append(Data("Content-Disposition: form-data; name=\"file\"; filename=\"\(run.file.lastPathComponent)\"".utf8))
        body.append(newLine)
        body.append(Data("Content-Type: application/octet-stream".utf8))
        body.append(newLine)
        body.append(newLine)
        body.append(fileData)
        body.append(newLine)
        body.append(delimiter)
        body.append(newLine)
        body.append(Data("Content-Disposition: form-data; name=\"\(TextField.name)\"".utf8))
        body.append(newLine)
        body.append(newLine)
        body.append(Data(TextField.value.utf8))
        body.append(newLine)
        body.append(closeDelimiter)
        body.append(newLine)

        var request = URLRequest(url: run.url)
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=\(headerBoundary)", forHTTPHeaderField: "Content-Type")
        run.log("body built in memory: \(ByteFormat.grouped(Int64(body.count))) bytes")
        let run = run
        UploadExchange(run, bodyBytes: Int64(body.count))
            .send({ session in session.uploadTask(with: request, from: body) }) { sent in
                completion(sent.check(run, sent: fixture))
            }
    }
}
