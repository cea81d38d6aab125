import Foundation
import LabVocabulary

/// `crash-at-start` and `crash-after-start` in the life script: the app's process dies the next
/// time it resumes a new task, before the transfer service has it or just after. What the app
/// writes down itself (a note that a download runs), before `resume()` or after it, then says
/// other than the session: a task that does not exist, or none where one runs.
///
/// The phone arms each with a file in its life folder. Removing that file is atomic, so exactly
/// one resume, in whichever of the app's processes comes first, takes it and ends its process.
enum CrashAtStart {
    static func arm(_ crash: LifeScript.Action, in phone: PhoneFolder) throws {
        try Data().write(to: file(crash, in: phone))
    }

    /// Ends this process with SIGKILL when `crash` is armed; otherwise does nothing.
    static func strikeIfArmed(_ crash: LifeScript.Action, in phone: PhoneFolder) {
        guard unlink(file(crash, in: phone).path) == 0 else { return }
        kill(getpid(), SIGKILL)
    }

    /// A crash armed that has not struck yet: what comes after it in the script waits for it.
    static func isArmed(in phone: PhoneFolder) -> Bool {
        LifeScript.Action.allCases.filter(\.isACrash).contains { FileManager.default.fileExists(atPath: file($0, in: phone).path) }
    }

    private static func file(_ crash: LifeScript.Action, in phone: PhoneFolder) -> URL {
        phone.life.appendingPathComponent(crash.rawValue)
    }
}
