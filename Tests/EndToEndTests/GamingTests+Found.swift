import Foundation
import LabCatalogue
import LabKit
import LabVocabulary
import Testing

/// The seven cheats a student found that passed every check of their exercise, each on the
/// lesson's corrected code, each run with `check --only` on the check that now catches it.
extension GamingTests {
    /// 08: after a kill, `Range` sent blind: the ETag was kept in memory only, and no
    /// `Content-Range` is read. The file changes across the kill, and is spliced.
    @Test func aBlindRangeAfterAKillFailsExercise08() async throws {
        let records = try await Self.checkCheating("08", only: "changed-across-kill", edits: [
            ("import Synchronization\n", "import Synchronization\n\nlet rememberedTag = Mutex<String?>(nil)\n"),
            ("""
                            let (chunks, response) = try await run.sharedSession.bodyChunks(for: partial.nextRequest())
                            guard let file = try openForTheBody(of: response, partial) else { return .finished }
                            defer { try? file.close() }
                            for try await chunk in chunks {
                                try partial.append(chunk, through: file)
            """, """
                            var request = URLRequest(url: run.url)
                            let onDiskNow = PartialFile.size(of: run.file)
                            if onDiskNow > 0 {
                                request.setValue("bytes=\\(onDiskNow)-", forHTTPHeaderField: "Range")
                                if let tag = rememberedTag.withLock({ $0 }) { request.setValue(tag, forHTTPHeaderField: "If-Range") }
                            }
                            let (chunks, response) = try await run.sharedSession.bodyChunks(for: request)
                            let http = response as? HTTPURLResponse
                            let status = http?.statusCode ?? 0
                            guard (200...299).contains(status) else { return .failed(DownloadError.httpStatus(status, url: run.url.absoluteString)) }
                            if let tag = http?.value(forHTTPHeaderField: "ETag") { rememberedTag.withLock { $0 = tag } }
                            if onDiskNow == 0 || status == 200 { FileManager.default.createFile(atPath: run.file.path, contents: nil) }
                            let file = try FileHandle(forWritingTo: run.file)
                            defer { try? file.close() }
                            try file.seekToEnd()
                            for try await chunk in chunks {
                                try file.write(contentsOf: chunk)
            """)])
        #expect(records.last?.detail.contains("right size, wrong bytes") == true, "\(records)")
    }

    /// 09: the error's resume data never used: the system's five tries fail, and the app gives up.
    @Test func neverResumingFailsExercise09() async throws {
        let records = try await Self.checkCheating("09", only: "resumes-what-the-system-gave-up", edits: [
            ("if let resumeData = error.downloadTaskResumeData, resumesLeft > 0 {", "if let resumeData = error.downloadTaskResumeData, resumesLeft < 0 {"),
        ])
        #expect(records.last?.detail.contains("exit 69") == true, "\(records)")
    }

    /// 10: the validators kept in a global, never on disk: the second launch is a process of
    /// its own, and has forgotten them.
    @Test func validatorsInAGlobalFailExercise10() async throws {
        let records = try await Self.checkCheating("10", only: "keeps-the-current-file", edits: [
            ("import LabKit\n", "import LabKit\nimport Synchronization\n\nlet keptInMemory = Mutex<Validators?>(nil)\n"),
            ("    private func keptValidators() -> Validators? {\n", "    private func keptValidators() -> Validators? {\n        if let kept = keptInMemory.withLock({ $0 }) { return kept }\n        return nil\n    }\n\n    private func unused() -> Validators? {\n"),
            ("try JSONEncoder().encode(validators).write(to: validatorsFile, options: .atomic)", "keptInMemory.withLock { $0 = validators }"),
        ])
        #expect(records.last?.detail.contains("the server sent 8,388,608 bytes") == true, "\(records)")
    }

    /// 10: a one-byte `Range` probe in place of the conditional GET, its ETag compared in the
    /// app: one more round trip when the file changed.
    @Test func aOneByteProbeFailsExercise10() async throws {
        let records = try await Self.checkCheating("10", only: "extra-head", edits: [(
            "            request.setValue(kept.entityTag, forHTTPHeaderField: \"If-None-Match\")\n",
            """
                        var probe = URLRequest(url: run.url)
                        probe.setValue("bytes=0-0", forHTTPHeaderField: "Range")
                        URLSession.shared.dataTask(with: probe) { [self] _, response, _ in
                            if (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "ETag") == kept.entityTag {
                                run.saved(file)
                                return finish(.finished)
                            }
                            session.downloadTask(with: URLRequest(url: run.url)).resume()
                        }.resume()
                        return

            """)])
        #expect(records.last?.detail.contains("3 requests in all") == true, "\(records)")
    }

    /// 10: the file kept in the app's tmp, which iOS empties with Library/Caches.
    @Test func aFileInTmpFailsExercise10() async throws {
        let records = try await Self.checkCheating("10", only: "purged-home", edits: [
            ("folder = run.containerURL(for: .applicationSupportDirectory)", "folder = FileManager.default.temporaryDirectory"),
        ])
        #expect(records.last?.detail.contains("the server sent 8,388,608 bytes") == true, "\(records)")
    }

    /// 11: a range answered 503 asked for again at once, Retry-After ignored.
    @Test func askingAgainAtOnceFailsExercise11() async throws {
        let records = try await Self.checkCheating("11", only: "waits-retry-after", edits: [
            ("DispatchQueue.global().asyncAfter(deadline: .now() + wait)", "DispatchQueue.global().async"),
        ])
        #expect(records.last?.detail.contains("before the 503's Retry-After had passed") == true, "\(records)")
    }

    /// 11: the plan saved only when a range ends: the kill comes with every range part-way.
    @Test func aPlanSavedOnlyAtARangesEndFailsExercise11() async throws {
        let records = try await Self.checkCheating("11", only: "resumes-each-range", edits: [
            ("        try saveWhenDue(segment: index)\n", ""),
        ])
        #expect(records.last?.detail.contains("requests in all, and the server sent") == true, "\(records)")
    }

    /// `check NN --only CHECK --json` on the corrected logic with `edits` made: the code must
    /// compile and `check` must fail. (The clean check may fail too: lesson 10's is bounded to
    /// one download for its two launches.)
    static func checkCheating(_ number: String, only check: String, edits: [(String, String)]) async throws -> [CheckRecord] {
        try await ExerciseTests.takingTurns {
            let lesson = try #require(Catalogue.lesson(named: number))
            var files = try ExerciseTests.correctedFiles(lesson)
            var student = try #require(files[ExerciseSource.studentFile])
            for (piece, replacement) in edits {
                try #require(student.contains(piece), "\(piece)")
                student = student.replacingOccurrences(of: piece, with: replacement)
            }
            files[ExerciseSource.studentFile] = student
            let finished = try ExerciseTests.withExerciseFiles(lesson, holding: files) {
                try ExerciseTests.lab(["exercise", "check", number, "--only", check, "--json"])
            }
            let records = try ExerciseTests.records(finished.stdout)
            #expect(records.map(\.check) == [Check.cleanID, check], "\(finished.stderr)")
            #expect(records.last?.passed == false && records.last?.status != .doesNotCompile, "\(records)")
            return records
        }
    }
}
