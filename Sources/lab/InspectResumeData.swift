/// `lab inspect-resume-data FILE`: what is inside a blob of Apple-format resume data.
///
/// Feed it the files lesson 05 writes, or a blob captured from your own iPhone app: in the
/// completion handler of `downloadTask.cancel(byProducingResumeData:)` (or from
/// `error.userInfo[NSURLSessionDownloadTaskResumeData]` after a failed download) write the `Data`
/// to a file in the app's Documents folder, e.g.
///
///     let file = URL.documentsDirectory.appending(path: "resume.data")
///     try resumeData.write(to: file)
///
/// then copy it out: with Xcode's Devices and Simulators window (Download Container…), with the
/// Files app if the app sets `UIFileSharingEnabled`, or, on the simulator, straight from the path
/// `print(file.path)` shows. All three forms are read: the plain property lists of iOS 7–8 and
/// 9–11 and the keyed archive of iOS 12 and later (see `ResumeData` in LabKit).
///
/// Exit status: 0 with the fields on stdout; 66 (EX_NOINPUT) when the file cannot be read; 65
/// (EX_DATAERR) when it is not resume data; one line on stderr in both failure cases.

import ArgumentParser
import Foundation
import LabVocabulary
import LabHarness
import LabKit

struct InspectResumeData: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect-resume-data",
        abstract: "Show what is inside a file of Apple-format resume data (iOS 7 and later).",
        discussion: """
            Capture one from your own app: write the Data that cancel(byProducingResumeData:) hands \
            you to a file in the app's Documents folder, copy it out, and give that file here.
            """
    )

    @Argument(help: "A file holding the resume data.")
    var file: String

    @Flag(help: "Print one JSON object instead of one field per line.")
    var json = false

    /// sysexits.h
    static let noInput: Int32 = 66
    static let dataError: Int32 = 65

    /// Resume data is a few kilobytes; anything this big is something else.
    static let largestPlausibleSize = 16 << 20

    func run() throws {
        let data = try read()
        let decoded: (resumeData: ResumeData, form: ResumeData.Form)
        do {
            decoded = try ResumeData.decode(data)
        } catch {
            fail("\(error)", status: Self.dataError)
        }
        let output = json ? Self.json(decoded.resumeData, form: decoded.form)
                          : Self.lines(decoded.resumeData, form: decoded.form).joined(separator: "\n")
        FileHandle.standardOutput.write(Data((output + "\n").utf8))
    }

    private func read() throws -> Data {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
            fail("no such file", status: Self.noInput)
        }
        if isDirectory.boolValue { fail("is a directory, not a file", status: Self.noInput) }
        guard FileManager.default.isReadableFile(atPath: file) else { fail("permission denied", status: Self.noInput) }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            fail("cannot be read", status: Self.noInput)
        }
        if data.count > Self.largestPlausibleSize {
            fail("not resume data: \(data.count) bytes is far too large", status: Self.dataError)
        }
        return data
    }

    /// One line on stderr, then the exit status; no usage, no stack trace.
    private func fail(_ reason: String, status: Int32) -> Never {
        Console.error("lab inspect-resume-data: \(file): \(reason)")
        Self.exit(withError: ExitCode(status))
    }

    // MARK: Output

    static func lines(_ resumeData: ResumeData, form: ResumeData.Form) -> [String] {
        func line(_ label: String, _ value: String) -> String {
            label + String(repeating: " ", count: max(1, 16 - label.count)) + value.printable
        }
        var lines = [
            line("form", form.description),
            line("URL", resumeData.downloadURL),
            line("bytes received", ByteFormat.grouped(resumeData.bytesReceived)),
            line("validator", validator(resumeData)),
            line("server date", resumeData.serverDownloadDate ?? "none"),
            line("temp file", resumeData.tempFileName ?? "none"),
        ]
        if let localPath = resumeData.localPath { lines.append(line("local path", localPath)) }
        lines.append(line("version", "\(resumeData.infoVersion)"))
        if let url = resumeData.originalRequestURL { lines.append(line("original request", url)) }
        if let range = resumeData.currentRequestRange { lines.append(line("current request", "Range: \(range)")) }
        return lines
    }

    /// What the resumed request will send as If-Range: the ETag when there is one, else the date.
    static func validator(_ resumeData: ResumeData) -> String {
        if let tag = resumeData.entityTag { return "ETag \(tag)" }
        if let date = resumeData.serverDownloadDate { return "Last-Modified \(date)" }
        return "none"
    }

    static func json(_ resumeData: ResumeData, form: ResumeData.Form) -> String {
        let record = Record(
            form: form.rawValue, formDescription: form.description, url: resumeData.downloadURL,
            bytesReceived: resumeData.bytesReceived, entityTag: resumeData.entityTag,
            serverDownloadDate: resumeData.serverDownloadDate, validator: validator(resumeData),
            tempFileName: resumeData.tempFileName, localPath: resumeData.localPath,
            infoVersion: resumeData.infoVersion, originalRequestURL: resumeData.originalRequestURL,
            currentRequestRange: resumeData.currentRequestRange)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding strings and numbers cannot fail.
        return (try? String(decoding: encoder.encode(record), as: UTF8.self)) ?? "{}"
    }

    /// The `--json` object: every key always present, null when absent.
    struct Record: Encodable {
        let form: String
        let formDescription: String
        let url: String
        let bytesReceived: Int64
        let entityTag: String?
        let serverDownloadDate: String?
        let validator: String
        let tempFileName: String?
        let localPath: String?
        let infoVersion: Int
        let originalRequestURL: String?
        let currentRequestRange: String?

        enum CodingKeys: String, CodingKey {
            case form, formDescription, url, bytesReceived, entityTag, serverDownloadDate, validator
            case tempFileName, localPath, infoVersion, originalRequestURL, currentRequestRange
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(form, forKey: .form)
            try container.encode(formDescription, forKey: .formDescription)
            try container.encode(url, forKey: .url)
            try container.encode(bytesReceived, forKey: .bytesReceived)
            try container.encode(entityTag, forKey: .entityTag)
            try container.encode(serverDownloadDate, forKey: .serverDownloadDate)
            try container.encode(validator, forKey: .validator)
            try container.encode(tempFileName, forKey: .tempFileName)
            try container.encode(localPath, forKey: .localPath)
            try container.encode(infoVersion, forKey: .infoVersion)
            try container.encode(originalRequestURL, forKey: .originalRequestURL)
            try container.encode(currentRequestRange, forKey: .currentRequestRange)
        }
    }
}
