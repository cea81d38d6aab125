import Foundation
import LabCatalogue
import LabKit
import LabVocabulary
import Testing

/// The gaming suite: cheats a student could try that skip what a lesson teaches, each applied to
/// the lesson's corrected code, where it must fail the check that proves the skill. Each passed
/// every check of its exercise before that check existed.
struct GamingTests {
    /// 08: `Range: bytes=<size on disk>-` sent blind, with no If-Range and no look at
    /// Content-Range or at 200 against 206: whatever a 2xx brings is appended. A 200 with the whole file makes it
    /// longer; a file that changed is spliced.
    @Test func aBlindRangeFailsExercise08() async throws {
        try await ExerciseTests.takingTurns {
            let records = try ExerciseTests.checkCorrected("08", replacing: """
                                let (chunks, response) = try await run.sharedSession.bodyChunks(for: partial.nextRequest())
                                guard let file = try openForTheBody(of: response, partial) else { return .finished }
                                defer { try? file.close() }
                                for try await chunk in chunks {
                                    try partial.append(chunk, through: file)
                """, with: """
                                var request = URLRequest(url: run.url)
                                let onDiskNow = PartialFile.size(of: run.file)
                                if onDiskNow > 0 { request.setValue("bytes=\\(onDiskNow)-", forHTTPHeaderField: "Range") }
                                let (chunks, response) = try await run.sharedSession.bodyChunks(for: request)
                                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                                guard (200...299).contains(status) else { return .failed(DownloadError.httpStatus(status, url: run.url.absoluteString)) }
                                if onDiskNow == 0 { FileManager.default.createFile(atPath: run.file.path, contents: nil) }
                                let file = try FileHandle(forWritingTo: run.file)
                                defer { try? file.close() }
                                try file.seekToEnd()
                                for try await chunk in chunks {
                                    try file.write(contentsOf: chunk)
                """)
            #expect(Set(records.filter { !$0.passed }.map(\.check)) == ["range-ignored", "file-changed"], "\(records)")
        }
    }

    /// 09: the system's completion handler called as soon as it is handed over, and
    /// `urlSessionDidFinishEvents` gone: the system would suspend the app before the events are in.
    @Test func aHandlerCalledAtOnceFailsExercise09() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(.backgroundSession))
            var files = try ExerciseTests.correctedFiles(lesson)
            var student = try #require(files[ExerciseSource.studentFile])
            for (piece, replacement) in [
                ("        backgroundCompletionHandler = completionHandler\n", "        completionHandler()\n"),
                ("            self.backgroundCompletionHandler?()\n", ""),
            ] {
                try #require(student.contains(piece), "\(piece)")
                student = student.replacingOccurrences(of: piece, with: replacement)
            }
            files[ExerciseSource.studentFile] = student
            let seen = try ExerciseTests.withExerciseFiles(lesson, holding: files) {
                try ExerciseTests.lab(["exercise", "see", "09", "handler-never-called"])
            }
            #expect(seen.status == 1, "\(seen.stdout)\n\(seen.stderr)")
            #expect(seen.stdout.contains("the completion handler was called before the session had delivered its events"), "\(seen.stdout)")
        }
    }

    /// 09: Start downloads at once, without asking the session what still runs: after a
    /// relaunch, a second download of the file begins beside the one in the background.
    @Test func aStartThatAsksNothingFailsExercise09() async throws {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(.backgroundSession))
            var files = try ExerciseTests.correctedFiles(lesson)
            let student = try #require(files[ExerciseSource.studentFile])
            let asks = """
                        session.getAllTasks { tasks in
                            guard tasks.isEmpty else { return self.run.log("a download is running already, in the background") }
                            self.session.downloadTask(with: self.run.url).resume()
                        }
                """
            try #require(student.contains(asks))
            files[ExerciseSource.studentFile] = student.replacingOccurrences(of: asks, with: "        session.downloadTask(with: run.url).resume()\n")
            let seen = try ExerciseTests.withExerciseFiles(lesson, holding: files) {
                try ExerciseTests.lab(["exercise", "see", "09", "starts-one-download"])
            }
            #expect(seen.status == 1, "\(seen.stdout)\n\(seen.stderr)")
            #expect(seen.stdout.contains("2 downloads were given to the transfer service: Start began another while one was running"), "\(seen.stdout)")
        }
    }
}
