/// A word as a POSIX shell reads it back whole: commands the lab prints are pasted into a
/// terminal, where a URL's `&`, a `?` or a space would otherwise split or run them.
public enum ShellWord {
    /// The word as it is when every character is safe, `""` when empty, else in single quotes
    /// (a quote inside closed, escaped and reopened).
    public static func quoted(_ word: String) -> String {
        if word.isEmpty { return "\"\"" }
        if word.unicodeScalars.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `words`, each quoted, joined by spaces.
    public static func line(_ words: [String]) -> String { words.map(quoted).joined(separator: " ") }

    private static let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-".unicodeScalars)
}
