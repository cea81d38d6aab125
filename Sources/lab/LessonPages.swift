import ArgumentParser
import Foundation
import LabVocabulary

/// Where a report links to the lesson pages.
enum LessonPages {
    /// The prefix for links to the lesson pages, relative to the page's folder, with a trailing
    /// slash: `lessons` when given (a URL is kept as it is), else ./Lessons when the current
    /// directory has one (as it does in the package), else nil and the page names show as text.
    static func linkPrefix(_ lessons: String?, pageFolder: URL) -> String? {
        if let lessons, lessons.contains("://") {
            return lessons.hasSuffix("/") ? lessons : lessons + "/"
        }
        let folder = lessons ?? "Lessons"
        var isDirectory: ObjCBool = false
        guard lessons != nil || (FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) && isDirectory.boolValue)
        else { return nil }
        let target = URL(fileURLWithPath: folder).standardizedFileURL.pathComponents
        let base = pageFolder.standardizedFileURL.pathComponents
        let shared = zip(target, base).prefix { $0 == $1 }.count
        var steps = Array(repeating: "..", count: base.count - shared) + target[shared...]
        // A first step with a colon would read as a URL scheme in an href (`javascript:…`).
        if steps.first?.contains(":") == true { steps.insert(".", at: 0) }
        return steps.isEmpty ? "" : steps.joined(separator: "/") + "/"
    }

    /// `--lessons` is a folder, or an http(s) URL: a page that promises no script links nowhere else.
    static func check(_ lessons: String) throws {
        guard lessons.contains("://") else { return }
        guard let url = URL(string: lessons), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
              url.host?.isEmpty == false
        else { throw ValidationError("--lessons must be a folder or an http:// or https:// URL, got \"\(lessons.prefix(200))\"") }
    }
}
