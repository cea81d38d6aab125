import Foundation
import LabKit
import LabPlatform
import LabVocabulary
import TestThreads
import Testing

/// Today's HTTP against the lessons, run as processes against their embedded server: compressed
/// bodies (`gzip`, as nginx compresses), unknown lengths (`chunked`) and names chosen by the
/// server (`disposition:`).
struct CompressedBodyTests {
    static let downloads = LessonID.allCases.filter { $0.kind != .upload }
    /// Those that continue the file on disk; the others start over (`LessonID.Resumption`).
    static let resuming = downloads.filter { $0.resumption != .startsOver }

    /// The percentages of a run's progress lines, and the total each names: "progress 375%: 4.0 MiB of 1.1 MiB".
    static func percentages(_ story: String) -> [(percent: Int, total: String)] {
        story.split(separator: "\n").compactMap { line in
            guard let match = line.firstMatch(of: /^progress (-?\d+)%: .* of (.+)$/), let percent = Int(match.output.1) else { return nil }
            return (percent, String(match.output.2))
        }
    }

    static func run(_ lesson: LessonID, _ variant: Variant, faults: String, size: String = "4MiB",
                    folder: URL? = nil, arguments: [String] = []) throws -> (finished: ChildProcess.Finished, record: LessonResult) {
        let output = try (folder ?? scratchDirectory()).appendingPathComponent(lesson == .downloadTaskResume ? "saved" : "download.bin")
        let finished = try ChildProcess.run(lesson.executable, ["--variant", variant.rawValue, "--faults", faults, "--size", size,
                                                                "--output", output.path, "--json"] + arguments, timeout: 120)
        return (finished, try finished.result())
    }

    /// Every corrected download, under gzip on both attempts: the exact file, and no percentage
    /// outside 0 to 100. The resuming lessons ask for the file as it is.
    @Test(arguments: downloads)
    func gzipNeverTakesACorrectedLessonsProgressPast100(lesson: LessonID) async throws {
        try await OffThePool.run {
            let (finished, record) = try Self.run(lesson, .corrected, faults: "gzip,gzip")
            #expect(finished.status == 0 && record.outcome == .verified, "\(finished.stderr.suffix(600))")
            #expect(Self.percentages(finished.stderr).allSatisfy { (0...100).contains($0.percent) }, "\(finished.stderr)")
            #expect((record.progress?.highestPercent ?? 0) <= 100)
            // Those that resume never let URLSession ask for gzip: the server sent the file as it is.
            if Self.resuming.contains(lesson) {
                #expect(record.requests.filter { $0.method == .get }.allSatisfy { $0.status == 200 || $0.status == 206 })
                #expect(record.bytesReceived == record.fileBytes, "nothing came twice, nothing came compressed")
            }
        }
    }

    /// The other ways of the lessons that have several: the same exact file, no percentage past
    /// 100. `download(for:)` once compared the decoded file with the compressed length.
    @Test(arguments: [(LessonID.smallFile, "contents-of"), (.runLoopThread, "delegate-queue"), (.asyncAwait, "pause"),
                      (.asyncAwait, "download")])
    func gzipKeepsEveryWayExact(lesson: LessonID, way: String) async throws {
        try await OffThePool.run {
            let (finished, record) = try Self.run(lesson, .corrected, faults: "gzip,gzip", arguments: ["--way", way])
            #expect(finished.status == 0 && record.outcome == .verified, "\(finished.stderr.suffix(600))")
            #expect(Self.percentages(finished.stderr).allSatisfy { (0...100).contains($0.percent) }, "\(finished.stderr)")
        }
    }

    /// What the catalogue predicts for the articles of 01 to 05: progress past 100%, reckoned
    /// against the compressed length the response announced.
    @Test(arguments: [LessonID.inMemory, .fileHandle, .outputStream, .sessionDataTask, .downloadTaskResume])
    func gzipTakesTheArticlesProgressPast100(lesson: LessonID) async throws {
        try await OffThePool.run {
            let (finished, record) = try Self.run(lesson, .article, faults: "gzip,gzip")
            let lines = Self.percentages(finished.stderr)
            let highest = try #require(lines.max { $0.percent < $1.percent })
            #expect(highest.percent > 300, "\(lines)")
            let compressed = try #require(record.requests.first { $0.method == .get }?.contentLength)
            #expect(compressed < record.fileBytes / 3)
            #expect(highest.total == ByteFormat.iec(compressed))
            #expect((record.progress?.highestPercent ?? 0) > 300)
        }
    }

    /// A drop, then a server that compresses again: the corrected lessons resume with a 206 of
    /// the file as it is; the articles of 02 and 04 append a whole compressed file's worth of
    /// decoded bytes, and 03's starts over.
    @Test(arguments: resuming)
    func aCompressedResumeNeverSplices(lesson: LessonID) async throws {
        try await OffThePool.run {
            let (finished, record) = try Self.run(lesson, .corrected, faults: "gzip+drop:40pct,gzip")
            #expect(finished.status == 0 && record.outcome == .verified, "\(finished.stderr.suffix(600))")
            // Lesson 06's side demonstrations fetch from a URL of their own.
            let gets = record.requests.filter { $0.method == .get && $0.url == record.url }
            #expect(gets.count >= 2 && gets.dropFirst().allSatisfy { $0.status == 206 && $0.range != nil }, "\(gets)")
            #expect(record.bytesDownloadedAgain <= 1 << 20)
        }
    }

    @Test func theArticlesSpliceOrStartOverWhenTheResumeIsCompressed() async throws {
        try await OffThePool.run {
            for lesson in [LessonID.fileHandle, .sessionDataTask] {
                let (finished, record) = try Self.run(lesson, .article, faults: "gzip+drop:40pct,gzip")
                #expect(finished.status == 65 && record.outcome == .verificationFailed)
                #expect(record.fileBytes > 4 << 20, "\(lesson): the whole file after the 40% on disk")
            }
            let (finished, record) = try Self.run(.outputStream, .article, faults: "gzip+drop:40pct,gzip")
            #expect(finished.status == 0)
            let gets = record.requests.filter { $0.method == .get }
            #expect(gets.count == 2 && gets[1].range != nil && gets[1].status == 200, "asked for the rest, got all of it again")
        }
    }

    /// Lesson 04's article adds -1 (no Content-Length) to the bytes on disk for its total: after a
    /// chunked resume the progress passes 100%.
    @Test func aChunkedResumeTakesLesson04sArticlePast100() async throws {
        try await OffThePool.run {
            let (finished, _) = try Self.run(.sessionDataTask, .article, faults: "chunked+drop:40pct,chunked")
            #expect(finished.status == 0)
            #expect(Self.percentages(finished.stderr).contains { $0.percent > 100 }, "\(finished.stderr)")
            let (corrected, _) = try Self.run(.sessionDataTask, .corrected, faults: "chunked+drop:40pct,chunked")
            #expect(corrected.status == 0)
            #expect(Self.percentages(corrected.stderr).allSatisfy { (0...100).contains($0.percent) })
        }
    }

    /// Lesson 00 holds a whole body in memory: a length it cannot know is refused before the GET,
    /// whatever the size; a compressed one is asked for as it is, and so known.
    @Test func lesson00RefusesAnUnknownLengthAndCopesWithGzip() async throws {
        try await OffThePool.run {
            for size in ["4MiB", "96MiB"] {
                let (finished, record) = try Self.run(.smallFile, .corrected, faults: "chunked", size: size)
                #expect(finished.status == ExitStatus.transferFailed.rawValue)
                #expect(finished.stderr.hasSuffix("lesson-00-small-file: refusing to hold a body of unknown size in memory (no Content-Length; limit 64.0 MiB): "
                                                  + "a file whose size is not known needs a streaming lesson, such as lesson-03-outputstream\n"),
                        "\(finished.stderr.suffix(300))")
                #expect(record.requests.allSatisfy { $0.method == .head }, "no GET: nothing was held")
                #expect(record.peakRSSBytes < 80 << 20)
            }
            let (finished, record) = try Self.run(.smallFile, .corrected, faults: "gzip")
            #expect(finished.status == 0 && record.outcome == .verified)
        }
    }

    /// Names a hostile server might send, percent-encoded for the fault script, and the name each
    /// is saved under on Linux. Foundation there reads `filename=` only, which the server writes
    /// with `_` for anything that is not printable ASCII, and joins path components with `_`.
    static let hostileNames = [
        ("..%2F..%2Fx", "_.._x"), ("%2Fetc%2Fx", "_etc_x"), ("..%5C..%5Cx", "x"), (".hidden", "hidden"),
        ("a%0Ab%07c%1B%5B31m", "a_b_c_[31m"), (String(repeating: "a", count: 10_000), String(repeating: "a", count: 200)),
        (String(repeating: "%C3%A9", count: 300), String(repeating: "_", count: 200)),
        ("..", "download"), ("r%C3%A9sum%C3%A9.pdf", "r_sum_.pdf"), ("%E2%80%AEfdp.exe", "_fdp.exe"),
        ("lesson-05-download-task-resume.RESUMEDATA", "lesson-05-download-task-resume.RESUMEDATA.download"),
    ]

    /// Lesson 05 names the file from the response and keeps it in the folder: nothing is written
    /// anywhere else, the name is a plain one, and the story shows it. The name comes with every
    /// response, as a real server sends it: the 206 of the resume after Pause names the file too.
    @Test(arguments: hostileNames)
    func aServerNamedFileStaysInTheFolder(name: String, savedOnLinux: String) async throws {
        try await OffThePool.run {
            let scratch = try scratchDirectory()
            let folder = scratch.appendingPathComponent("a/b")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let (finished, record) = try Self.run(.downloadTaskResume, .corrected, faults: "disposition:\(name),disposition:\(name)",
                                                  size: "1MiB", folder: folder)
            #expect(finished.status == 0 && record.outcome == .verified, "\(finished.stderr.suffix(400))")
            let saved = URL(fileURLWithPath: record.output)
            #expect(saved.deletingLastPathComponent().path == folder.appendingPathComponent("saved").path)
            let savedName = saved.lastPathComponent
            if Platform.isLinux { #expect(savedName == savedOnLinux) }
            #expect(!savedName.hasPrefix(".") && !savedName.contains("/") && !savedName.contains("\\") && savedName.utf8.count <= 209)
            #expect(!savedName.unicodeScalars.contains { $0.properties.generalCategory == .control })
            #expect(!savedName.lowercased().hasSuffix(".resumedata"), "the name of the resume data kept beside it")
            #expect(finished.stderr.contains("  saved as          \(record.output)\n"))
            // Every file under the scratch folder is the one saved.
            let files = FileManager.default.enumerator(at: scratch, includingPropertiesForKeys: [.isRegularFileKey])?
                .compactMap { $0 as? URL }.filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true } ?? []
            #expect(files.map { $0.resolvingSymlinksInPath().path } == [saved.resolvingSymlinksInPath().path])
        }
    }

    /// A server that names a folder already in the output folder: the folder and what is in it
    /// stay, and the file is saved beside it under a number.
    @Test func aServerNamedFileNeverReplacesAFolder() async throws {
        try await OffThePool.run {
            let folder = try scratchDirectory()
            let inTheWay = folder.appendingPathComponent("saved/notes")
            try FileManager.default.createDirectory(at: inTheWay, withIntermediateDirectories: true)
            try Data("keep me".utf8).write(to: inTheWay.appendingPathComponent("keep.txt"))
            let (finished, record) = try Self.run(.downloadTaskResume, .corrected, faults: "disposition:notes,disposition:notes", size: "1MiB",
                                                  folder: folder)
            #expect(finished.status == 0 && record.outcome == .verified, "\(finished.stderr.suffix(400))")
            #expect(URL(fileURLWithPath: record.output).lastPathComponent == "notes (2)")
            #expect(try String(contentsOf: inTheWay.appendingPathComponent("keep.txt"), encoding: .utf8) == "keep me")
        }
    }
}
