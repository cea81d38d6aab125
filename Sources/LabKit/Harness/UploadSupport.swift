import Foundation
import LabServer

/// The generated file an upload lesson sends: a lab fixture, named here so that a lesson needs
/// LabKit alone.
public typealias UploadFile = Fixture

/// The embedded server's answer to `POST /upload` (README, "The embedded server").
public struct UploadAnswer: Decodable, Sendable {
    public struct File: Decodable, Sendable {
        public var name: String
        public var filename: String
        public var contentType: String?
        public var bytes: Int64
        public var sha256: String
    }

    public var fields: [String: String]
    public var files: [File]
    public var bodyBytes: Int64
}

extension LessonRun {
    /// Writes the generated file to send (`uploadFixture`) into `file`, 1 MiB at a time, and
    /// returns its description. Only for a lesson made with `uploads: true`.
    public func writeUploadFile() throws -> UploadFile {
        guard let fixture = uploadFixture else { preconditionFailure("writeUploadFile() needs Lesson(uploads: true)") }
        do {
            try fixture.write(to: file)
        } catch {
            throw DownloadError.localIO(path: file.path, reason: "\(error)")
        }
        return fixture
    }

    /// Compares the file part `name` of the server's answer with the file that was sent, and
    /// reports the result with `verified(_:)`.
    public func verify(_ answer: UploadAnswer, part name: String, sent fixture: UploadFile) {
        let part = answer.files.first { $0.name == name }
        verified(TransferCheck(expectedSHA256: fixture.sha256Hex(), expectedBytes: fixture.size,
                               actualSHA256: part?.sha256, actualBytes: part?.bytes ?? 0,
                               actualSide: "the server received \"\(name)\" as"))
    }
}
