import Foundation
import LabCatalogue
import LabVocabulary

/// Reads a request body as a submission, or says in one line why not. Nothing the server
/// stores has skipped this.
enum SubmissionCheck {
    static func submission(from body: Data) throws(BadSubmission) -> ClassSubmission {
        let submission: ClassSubmission
        do {
            submission = try JSONDecoder().decode(ClassSubmission.self, from: body)
        } catch let error as DecodingError {
            throw BadSubmission(Self.describe(error))
        } catch {
            throw BadSubmission("the body is not JSON")
        }
        if let problem = ClassSubmission.problem(withName: submission.name) { throw BadSubmission(problem) }
        guard (8...64).contains(submission.id.count), submission.id.allSatisfy({ $0.isASCII && ($0.isHexDigit || $0 == "-") }) else {
            throw BadSubmission("the submission id is not one `lab` makes")
        }
        guard (16...128).contains(submission.studentKey.count) else { throw BadSubmission("the student key is not one `lab` makes") }
        guard submission.checks.isEmpty != (submission.comparison == nil) else {
            throw BadSubmission("a submission carries either exercise checks or one comparison")
        }
        var seen: Set<String> = []
        for record in submission.checks {
            if let field = CheckRecord.longestFields.first(where: { $0.length(record) > $0.limit }) {
                throw BadSubmission("a check's \(field.name) is longer than \(field.limit) characters")
            }
            if let run = record.exchanges, record.passed
                || !run.isWithin(exchanges: CheckRecord.mostExchanges, samples: CheckRecord.mostDiskSamples, longestText: CheckRecord.longestText) {
                throw BadSubmission("a check's run is more than a failing check's picture holds (\(CheckRecord.mostExchanges) exchanges, "
                                    + "\(CheckRecord.mostDiskSamples) samples, \(CheckRecord.longestText) characters a text)")
            }
            guard seen.insert(record.exercise + "/" + record.check).inserted else {
                throw BadSubmission("the check \(record.exercise.prefix(40))/\(record.check.prefix(40)) is there twice")
            }
            guard let lesson = Catalogue.lessons.first(where: { $0.id.rawValue == record.exercise }) else {
                throw BadSubmission("there is no exercise \"\(record.exercise.prefix(40))\"")
            }
            guard record.check == CheckRecord.buildCheck || lesson.everyCheck.contains(where: { $0.id == record.check }) else {
                throw BadSubmission("exercise \(lesson.id.number) has no check \"\(record.check.prefix(40))\"")
            }
        }
        return submission
    }

    /// "the field name is missing", not Foundation's paragraph with its coding path.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return "the field \(parent.isEmpty ? "" : parent + ".")\(key.stringValue) is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            // `null`, `[]` or a number where the submission's object belongs.
            return context.codingPath.isEmpty ? "the body is not a submission: a JSON object is expected"
                : "the field \(path(context)) has the wrong type"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "the body is not JSON" : "the field \(path(context)) has a value it cannot have"
        @unknown default:
            return "the body is not a submission"
        }
    }
}

struct BadSubmission: Error {
    let line: String
    init(_ line: String) { self.line = line }
}
