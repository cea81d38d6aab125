import ArgumentParser
import Foundation
import LabHarness
import LabKit
import LabReport
import LabVocabulary

/// `lab pages`: writes the measured section of each lesson page from a results file.
struct Pages: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write the measured section of each lesson page (Lessons/NN-….md) from a results.json.",
        discussion: """
            Each page keeps its figures between the lines \(MeasuredSection.begin) and \
            \(MeasuredSection.end); only that part is rewritten. The picture of each lesson's \
            exchanges it links to is written beside the pages, in \(ExchangePicture.folder)/. \
            `lab compare --update-pages` does the same right after its run.
            """
    )

    @Argument(help: "A results.json written by `lab compare`.")
    var results: String

    @Option(help: "The folder of lesson pages.")
    var lessons = "Lessons"

    func run() throws {
        // The same reading as `lab report`: bounded, schema checked, one line for what is wrong.
        let decoded = Report.read(results, command: "lab pages")
        guard LessonID.allCases.contains(where: { lesson in decoded.loopbackRuns.contains { $0.lesson == lesson.rawValue } }) else {
            Report.fail("\(results) has no run of a lesson against the lab's own server: no page to write", status: Report.dataError, command: "lab pages")
        }
        for page in try Self.update(lessons, from: decoded) { Console.output(page) }
    }

    /// Rewrites the section of every measured lesson's page in `folder`; returns the pages written.
    static func update(_ folder: String, from results: ComparisonResults) throws -> [String] {
        let measured = LessonID.allCases.filter { lesson in results.loopbackRuns.contains { $0.lesson == lesson.rawValue } }
        // Every page is read and made first, so that one page without markers leaves them all as they were.
        let pages = try measured.map { lesson in
            let path = URL(fileURLWithPath: folder).appendingPathComponent("\(lesson.rawValue).md")
            guard OutputFile.isRegularFile(path), let page = try? String(contentsOf: path, encoding: .utf8) else {
                throw ValidationError("\(path.path): cannot read it")
            }
            let section = try MeasuredSection.markdown(for: lesson, from: results)
            return (path, try MeasuredSection.replacing(in: page, named: path.path, with: section))
        }
        // The pictures the sections link to, beside the pages; a page with no picture keeps none.
        let pictures = measured.compactMap { lesson in ExchangePicture.svg(for: lesson, from: results).map { (lesson, $0) } }
        let pictureFolder = URL(fileURLWithPath: folder).appendingPathComponent(ExchangePicture.folder)
        if !pictures.isEmpty {
            do { try FileManager.default.createDirectory(at: pictureFolder, withIntermediateDirectories: true) } catch {
                throw ValidationError("cannot create \(pictureFolder.path): \(describe(error))")
            }
        }
        let files = pages.map { ($0.0, $0.1) } + pictures.map { (pictureFolder.appendingPathComponent(ExchangePicture.fileName($0.0)), $0.1) }
        for (path, text) in files {
            do {
                try OutputFile.checkReplaceable(path)
                try Data(text.utf8).write(to: path, options: .atomic)
            } catch let error as OutputFileError {
                throw ValidationError("cannot write \(path.path): \(error.reason)")
            } catch {
                throw ValidationError("cannot write \(path.path): \(describe(error))")
            }
        }
        return files.map(\.0.path)
    }
}
