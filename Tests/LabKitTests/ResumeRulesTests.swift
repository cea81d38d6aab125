import LabKit
import Testing

/// `ResumeRules.judge` over every combination of status, Content-Range, validator, compression,
/// bytes on disk and what vouches for them, held to the rules the lesson pages state; then the
/// cases each page's "Where it breaks" table names, one by one.
struct ResumeRulesTests {
    typealias Answer = ResumeRules.Answer
    static let total: Int64 = 1000
    static let onDiskChoices: [Int64] = [0, 400, total]
    static let knownChoices: [ResumeRules.Known?] = [nil, .init(validator: "\"v1\"", total: total),
                                                     .init(validator: "\"v1\"", total: -1), .init(validator: "\"v1\"", total: 999)]
    static let validators: [String?] = [nil, "\"v1\"", "\"v2\""]
    static func ranges(onDisk: Int64) -> [ContentRange?] {
        [nil, .bytes(first: onDisk, last: total - 1, total: total), .bytes(first: onDisk, last: total - 1, total: nil),
         .bytes(first: 0, last: total - 1, total: total), .bytes(first: onDisk, last: total - 1, total: 2000),
         .unsatisfied(total: onDisk), .unsatisfied(total: total + 1)]
    }

    @Test func everyCombinationFollowsTheRules() {
        var judged = 0
        for status in [200, 206, 304, 404, 416, 500] {
            for onDisk in Self.onDiskChoices {
                for range in Self.ranges(onDisk: onDisk) {
                    for validator in Self.validators {
                        for compressed in [false, true] {
                            for known in Self.knownChoices {
                                let answer = Answer(status: status, contentRange: range, validator: compressed ? nil : validator, compressed: compressed)
                                check(ResumeRules.judge(answer, onDisk: onDisk, known: known), answer, onDisk, known)
                                judged += 1
                            }
                        }
                    }
                }
            }
        }
        #expect(judged == 6 * 3 * 7 * 3 * 2 * 4)
    }

    /// The rules, as the pages state them, for one verdict.
    private func check(_ verdict: ResumeRules.Verdict, _ answer: Answer, _ onDisk: Int64, _ known: ResumeRules.Known?) {
        let sameVersion = { (validator: String?, total: Int64) in
            known.map { validator == $0.validator && ($0.total < 0 || $0.total == total) } ?? false
        }
        let context = "\(answer), \(onDisk) on disk, known \(String(describing: known)): \(verdict)"
        switch verdict {
        case .continueAt(let offset, let total):
            // Only a plain 206 that starts where the file ends, and on a resume only for its version.
            #expect(answer.status == 206 && !answer.compressed && offset == onDisk, "\(context)")
            #expect(answer.contentRange == .bytes(first: onDisk, last: Self.total - 1, total: total), "\(context)")
            #expect(onDisk == 0 || sameVersion(answer.validator, total), "\(context)")
        case .startFromZero(let resumable):
            #expect(answer.status == 200 && resumable == (answer.validator != nil && !answer.compressed), "\(context)")
        case .alreadyComplete(let total):
            // A 416 whose length is the bytes on disk, for a version something vouches for.
            #expect(answer.status == 416 && onDisk > 0 && total == onDisk && answer.contentRange == .unsatisfied(total: onDisk), "\(context)")
            #expect(sameVersion(answer.validator ?? known?.validator, total), "\(context)")
        case .anotherVersion:
            #expect(answer.status == 206 || (answer.status == 416 && onDisk > 0), "\(context)")
        case .wrongRange(let expectedStart):
            #expect(answer.status == 206 && !answer.compressed && expectedStart == onDisk, "\(context)")
        case .notTheFile(let status):
            #expect(status == answer.status && ![200, 206].contains(status) && (status != 416 || onDisk == 0), "\(context)")
        }
    }

    @Test(arguments: [
        // A fresh download: a 206 from byte 0 is the file; a 416 is not.
        (Answer(status: 206, contentRange: .bytes(first: 0, last: 999, total: 1000), validator: nil, compressed: false), 0, nil,
         ResumeRules.Verdict.continueAt(offset: 0, total: 1000)),
        (Answer(status: 416, contentRange: .unsatisfied(total: 0), validator: nil, compressed: false), 0, nil, .notTheFile(status: 416)),
        // A resume: its version continues; another version, or none vouched for, starts over.
        (Answer(status: 206, contentRange: .bytes(first: 400, last: 999, total: 1000), validator: "\"v1\"", compressed: false), 400,
         ResumeRules.Known(validator: "\"v1\"", total: 1000), .continueAt(offset: 400, total: 1000)),
        (Answer(status: 206, contentRange: .bytes(first: 400, last: 999, total: 1000), validator: "\"v2\"", compressed: false), 400,
         ResumeRules.Known(validator: "\"v1\"", total: 1000),
         .anotherVersion(because: "the 206 is for another version of the file (validator \"v2\", 1000 bytes; the partial file's: \"v1\", 1000 bytes)")),
        (Answer(status: 206, contentRange: .bytes(first: 400, last: 999, total: 1000), validator: "\"v1\"", compressed: false), 400, nil,
         .anotherVersion(because: "the 206 is for another version of the file (validator \"v1\", 1000 bytes; the partial file's: nothing vouches for it)")),
        // The range asked for, or nothing; a compressed 206 is no offset into the file.
        (Answer(status: 206, contentRange: .bytes(first: 0, last: 999, total: 1000), validator: "\"v1\"", compressed: false), 400,
         ResumeRules.Known(validator: "\"v1\"", total: 1000), .wrongRange(expectedStart: 400)),
        (Answer(status: 206, contentRange: .bytes(first: 400, last: 999, total: 1000), validator: nil, compressed: true), 400,
         ResumeRules.Known(validator: "\"v1\"", total: 1000), .anotherVersion(because: "the 206 is compressed: its bytes are no offset into the file")),
        // A 200 starts over; compressed, or without a validator, it can never be resumed.
        (Answer(status: 200, contentRange: nil, validator: "\"v1\"", compressed: false), 400, ResumeRules.Known(validator: "\"v1\"", total: 1000),
         .startFromZero(resumable: true)),
        (Answer(status: 200, contentRange: nil, validator: nil, compressed: true), 0, nil, .startFromZero(resumable: false)),
        // A 416 for a whole file: with the validator, or without one (If-Range matched); not with another.
        (Answer(status: 416, contentRange: .unsatisfied(total: 1000), validator: "\"v1\"", compressed: false), 1000,
         ResumeRules.Known(validator: "\"v1\"", total: 1000), .alreadyComplete(total: 1000)),
        (Answer(status: 416, contentRange: .unsatisfied(total: 1000), validator: nil, compressed: false), 1000,
         ResumeRules.Known(validator: "\"v1\"", total: -1), .alreadyComplete(total: 1000)),
        (Answer(status: 416, contentRange: .unsatisfied(total: 1000), validator: "\"v2\"", compressed: false), 1000,
         ResumeRules.Known(validator: "\"v1\"", total: 1000),
         .anotherVersion(because: "the partial file does not match the server's file (416 for \"v1\", 1000 bytes, 1000 bytes on disk)")),
        (Answer(status: 404, contentRange: nil, validator: nil, compressed: false), 400, ResumeRules.Known(validator: "\"v1\"", total: 1000),
         .notTheFile(status: 404)),
    ] as [(Answer, Int64, ResumeRules.Known?, ResumeRules.Verdict)])
    func theCasesThePagesName(answer: Answer, onDisk: Int64, known: ResumeRules.Known?, verdict: ResumeRules.Verdict) {
        #expect(ResumeRules.judge(answer, onDisk: onDisk, known: known) == verdict)
    }
}
