/// A string from a results file, made into text for a Markdown page: whatever a record holds (a
/// machine's name, a failure's cause), a renderer shows it as the characters it is, never as
/// markup. `lab report` needs none of this: libxml2 escapes what it writes (HTMLTree).
enum PageText {
    /// Characters that start Markdown or HTML where they stand, written as numeric character
    /// references, which CommonMark and python-markdown both show as the character itself.
    private static let markup: Set<Unicode.Scalar> = ["&", "<", ">", "\\", "`", "*", "_", "[", "]", "!", "|", "~"]

    /// `text` on one line: control and format characters (a line break, U+202E, a zero-width
    /// joiner) are dropped, since they would end the line or reorder what is shown around them.
    static func inline(_ text: String) -> String {
        var written = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned, .privateUse: continue
            default: break
            }
            if markup.contains(scalar) { written += "&#\(scalar.value);" } else { written.unicodeScalars.append(scalar) }
        }
        return written
    }
}
