import Foundation
import LabFixtures
import LabVocabulary

/// The generated file an upload lesson sends: a lab fixture, named here so that a lesson needs
/// LabKit alone.
public typealias UploadFile = Fixture

/// The embedded server's answer to `POST /upload` (docs/server-and-faults.md).
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
    /// The generated file to send, already in `file` when the first attempt starts, as the photo
    /// an app uploads is already on disk. Only for a lesson made with `uploads: true`.
    public var uploadFile: UploadFile {
        guard let uploadFixture else { preconditionFailure("uploadFile needs Lesson(uploads: true)") }
        return uploadFixture
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
