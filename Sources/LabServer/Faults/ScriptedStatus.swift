/// The body of a status the fault script asks for (`status:404`): one line a client could save
/// as "the file" by mistake, and that `lab exercise` recognises when it does.
public enum ScriptedStatus {
    static func page(code: Int, reason: String, attempt: Int) -> String {
        "\(code) \(reason) (scripted fault, attempt \(attempt))\n"
    }

    public static func isPage(_ text: String) -> Bool {
        text.hasSuffix(")\n") && text.contains(" (scripted fault, attempt ") && text.first?.isNumber == true
    }
}
