import Foundation

/// Decoding a record the lab wrote, with the schema checked first and what is wrong said in one
/// line: a results file (`ComparisonResults.read(from:)`) and a lesson's `--json` record
/// (`LessonResult.read(standardOutput:)`) are read through here.
enum SchemaCheckedJSON {
    /// `data` as `T`, or why it is not one: not JSON, not an object, another schema, or the
    /// first field that is missing or of the wrong type, named by its path.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, schema: String, kind: String) -> Result<T, Problem> {
        guard let object = try? JSONSerialization.jsonObject(with: data) else {
            return .failure(Problem(data.isEmpty ? "it is empty" : "not JSON: it is cut short, or not a \(kind)"))
        }
        guard let fields = object as? [String: Any] else { return .failure(Problem("not a JSON object")) }
        let found = fields["schema"] as? String
        guard found == schema else {
            return .failure(Problem("schema is \(found.map { "\"\($0)\"" } ?? "missing"), expected \"\(schema)\""))
        }
        do {
            return .success(try JSONDecoder().decode(T.self, from: data))
        } catch let DecodingError.keyNotFound(key, context) {
            return .failure(Problem("missing \(path(context.codingPath + [key]))"))
        } catch let DecodingError.typeMismatch(_, context) {
            return .failure(Problem("wrong type at \(path(context.codingPath))"))
        } catch let DecodingError.valueNotFound(_, context) {
            return .failure(Problem("null at \(path(context.codingPath))"))
        } catch let DecodingError.dataCorrupted(context) {
            return .failure(Problem("unreadable value at \(path(context.codingPath))"))
        } catch {
            return .failure(Problem("not a \(kind)"))
        }
    }

    struct Problem: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingPrefix(".").description
    }
}

extension LessonResult {
    /// What a lesson run's standard output held: its record, nothing (a run killed or crashed
    /// before it printed one), or something that is not its record, and why.
    public enum Reading: Sendable {
        case record(LessonResult)
        case none
        case unreadable(reason: String)

        public var record: LessonResult? { if case .record(let record) = self { record } else { nil } }
        public var problem: String? { if case .unreadable(let reason) = self { reason } else { nil } }
    }

    /// The record of a run with `--json`: one line, with this schema. A program's own
    /// `print` lands on the same standard output and spoils it; the reason names its first line.
    public static func read(standardOutput: String) -> Reading {
        let lines = standardOutput.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        guard !lines.isEmpty else { return .none }
        // A program's own print is flushed when it exits, after the record: any line may be it.
        if let foreign = lines.first(where: { !$0.hasPrefix("{") }) {
            // Shown on a terminal: what could move its cursor or change its colours is a "?".
            let shown = String(String.UnicodeScalarView(foreign.unicodeScalars.map {
                $0.properties.generalCategory == .control ? "?" : $0
            })).shortened(to: 80)
            return .unreadable(reason: "standard output holds more than the record, \"\(shown)\": "
                               + "a program prints to standard error (run.log), never to standard output")
        }
        guard lines.count == 1 else { return .unreadable(reason: "standard output holds \(lines.count) records where a run prints one") }
        switch SchemaCheckedJSON.decode(LessonResult.self, from: Data(lines[0].utf8), schema: currentSchema, kind: "lesson record") {
        case .success(let record): return .record(record)
        case .failure(let problem): return .unreadable(reason: "its record is unreadable: \(problem.reason)")
        }
    }
}
