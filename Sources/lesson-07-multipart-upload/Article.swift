/// Lesson 07, the article's variant: the strategy as the article writes it, defects and all.
/// `diff Article.swift Corrected.swift` shows the fix; Lessons/07-multipart-upload.md explains it.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonUpload { ArticleUpload(run) }

/// The article's body, byte for byte in shape: built whole in memory, sent in one piece.
final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let fixture = run.uploadFile
        let fileData: Data
        do {
            fileData = try Data(contentsOf: run.file)  // the whole file in memory, as the article does
        } catch {
            return completion(.failed(error))
        }
        // The header names the boundary; each delimiter in the body is "--" plus that boundary.
        let headerBoundary = "----DownloadLab"
        let delimiter = Data("------DownloadLab".utf8)
        let closeDelimiter = Data("------DownloadLab--".utf8)
        let newLine = Data("\r\n".utf8)

        var body = Data()
        body.append(delimiter)
        body.append(newLine)
        // Weakness: the file name goes in as it is; a quote or a line break in it rewrites the headers.
        body.append(Data("Content-Disposition: form-data; name=\"file\"; filename=\"\(run.file.lastPathComponent)\"".utf8))
        body.append(newLine)
        body.append(Data("Content-Type: application/octet-stream".utf8))
        body.append(newLine)
        body.append(newLine)
        body.append(fileData)
        // Defect: two line breaks. The second one belongs to the next delimiter; the first one
        // becomes part of the file.
        body.append(newLine)
        body.append(newLine)
        body.append(delimiter)
        body.append(newLine)
        body.append(Data("Content-Disposition: form-data; name=\"\(TextField.name)\"".utf8))
        body.append(newLine)
        body.append(newLine)
        body.append(Data(TextField.value.utf8))
        body.append(newLine)
        body.append(closeDelimiter)

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
