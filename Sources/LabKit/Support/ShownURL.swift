import Foundation
import LabVocabulary

/// URLs as the lab shows them in stories, records and error lines.
public enum ShownURL {
    /// `text` with the user info of its authority (`user:password@`) replaced by `***@`: a
    /// password given with `--url` never reaches the screen or a results file.
    public static func redacted(_ text: String) -> String {
        guard let schemeEnd = text.range(of: "://") else { return text }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = text[authorityStart...].firstIndex { "/?#".contains($0) } ?? text.endIndex
        guard let at = text[authorityStart..<authorityEnd].lastIndex(of: "@") else { return text }
        return String(text[..<authorityStart]) + "***" + String(text[at...])
    }

    public static func redacted(_ url: URL) -> String { redacted(url.absoluteString) }

    /// Redacted, and cut to `limit` characters for a line on a terminal.
    public static func brief(_ text: String, limit: Int = 200) -> String {
        let shown = redacted(text)
        guard shown.count > limit else { return shown }
        return shown.prefix(limit) + "… (\(shown.count) characters)"
    }

    public static func brief(_ url: URL, limit: Int = 200) -> String { brief(url.absoluteString, limit: limit) }
}
