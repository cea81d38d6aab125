/// Exercise 07: the article's code from Sources/lesson-07-multipart-upload/Article.swift, with
/// its defects. Fix them here; the lesson itself never changes.
///
///     swift run lab exercise check 07   build this and run it against the lab server
///     swift run lab exercise hint 07    a hint for the first check that fails (or: hint 07 <check>)
///     swift run lab exercise watch 07   check again on every save
///     swift run lab exercise reset 07   back to this starting code
///
/// How the program ends is checked too. Return `.failed(error)` with LabKit's `DownloadError`
/// and the lab gives the lesson's exit status and a one-line message:
///     .httpStatus, .lengthMismatch, .contentRangeMismatch, .tooLargeForMemory   exit 69
///     .localIO (a write failed: the disk is full)                               exit 74
///     a file called done that is not the server's                               exit 65
///
/// Swift 6 checks data races. A completion handler or a delegate callback runs on another
/// thread, so the compiler refuses a plain `var` that it changes. The lessons keep such state
/// in a Mutex (`import Synchronization`), which locks every read and write:
///     let received = Mutex<Data?>(nil)
///     session.dataTask(with: request) { data, _, _ in received.withLock { $0 = data } }.resume()
///     ... later: let data = received.withLock { $0 }
/// A delegate whose callbacks all run one at a time on its session's serial delegate queue
/// may say so instead: `@unchecked Sendable`, with a comment why (lessons 04 and 05).
///
/// Read Lessons/07-multipart-upload.md next to this file. This file was made by `lab exercise reset`.
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
        body.append(Data("Content-Disposition: form-data; name=\"file\"; filename=\"\(run.file.lastPathComponent)\"".utf8))
        body.append(newLine)
        body.append(Data("Content-Type: application/octet-stream".utf8))
        body.append(newLine)
        body.append(newLine)
        body.append(fileData)
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
