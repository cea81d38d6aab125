import Foundation
import LabVocabulary

/// `crash-at-start` in the life script: the app's process dies the next time it resumes a new
/// task, before the transfer service has it. What the app wrote down itself (a note that a
/// download runs) then outlives the crash; the task it meant to start does not exist.
///
/// The phone arms it with a file in its life folder. Removing that file is atomic, so exactly one
/// resume, in whichever of the app's processes comes first, takes it and ends its process.
enum CrashAtStart {
    static func arm(in phone: PhoneFolder) throws {
        try Data().write(to: file(in: phone))
    }

    /// Ends this process with SIGKILL when a crash is armed; otherwise does nothing.
    static func strikeIfArmed(in phone: PhoneFolder) {
        guard unlink(file(in: phone).path) == 0 else { return }
        kill(getpid(), SIGKILL)
    }

    private static func file(in phone: PhoneFolder) -> URL {
        phone.life.appendingPathComponent(LifeScript.Action.crashAtStart.rawValue)
    }
}
