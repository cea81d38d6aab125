/// The ways a lesson can download, for a lesson that shows more than one. Declare them as an
/// enum whose raw values are what `--way` takes; the first case is the default:
///
///     enum Way: String, LessonWay {
///         case completionHandler = "completion-handler"
///         case contentsOf = "contents-of"
///
///         var summary: String { … }
///     }
///
/// Then `Lesson(…, ways: Way.self).run { run, way in … }` lists them in `--help`, parses `--way`
/// as `Way`, and hands the lesson's code the way chosen, for a `switch` that the compiler checks
/// is complete.
public protocol LessonWay: LabName, CaseIterable, Sendable {
    /// One line for `--help`: what this way does.
    var summary: String { get }
    /// The variants that have these ways (all, unless the enum says otherwise). The others have
    /// one way each: `--way` is refused with them, and their code never asks for one.
    static var variants: [Variant] { get }
}

extension LessonWay {
    public static var variants: [Variant] { Variant.allCases }

    /// Each way's `--way` name and its line of help, the default first.
    public static var listed: [(name: String, summary: String)] { allCases.map { ($0.rawValue, $0.summary) } }
}
