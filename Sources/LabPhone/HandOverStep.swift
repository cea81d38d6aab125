import Foundation
import LabKit
import LabVocabulary

/// The steps of lesson 09's hand-over, from "the service's partial file holds every byte" to "the
/// app has moved the file and its task is forgotten", in order. A kill at any of them must end
/// exact after the restart: the service finishes or keeps the file, the app is given it again.
///
/// A test names one in `DOWNLOAD_LAB_KILL_AT`: the process that reaches it ends itself there with
/// SIGKILL, once per run (a marker in the phone's life folder keeps the restarted process going).
/// With the variable unset, reaching a step does nothing.
public enum HandOverStep: String, CaseIterable, Sendable {
    /// The service: every byte written and the file closed; it still has its partial name.
    case partialFileWhole = "partial-file-whole"
    /// The service: the file has its finished name; the sidecar and the record are as before.
    case renamed
    /// The service: the record says downloaded; the app has not been told.
    case recordedDownloaded = "recorded-downloaded"
    /// The app's session: the file is linked into the app's temporary folder, before
    /// `didFinishDownloadingTo`.
    case linkedForTheApp = "linked-for-the-app"
    /// The app's session: `didFinishDownloadingTo` has returned (the app moved the file); the
    /// hand-over is not yet counted.
    case delegateReturned = "delegate-returned"
    /// The app's session: the hand-over is counted; the task is not yet told.
    case handOverCounted = "hand-over-counted"
    /// The app's session: the task is told and forgotten; the app has not yet quit.
    case taskForgotten = "task-forgotten"

    public static let variable = "DOWNLOAD_LAB_KILL_AT"

    /// Which of the phone's children reaches this step.
    public var role: String { self <= .recordedDownloaded ? "service" : "app" }

    /// Ends this process here with SIGKILL when a test asked for this step, the first time only.
    func reached(in phone: PhoneFolder) {
        guard ProcessInfo.processInfo.environment[Self.variable] == rawValue else { return }
        let marker = phone.life.appendingPathComponent("killed-at-\(rawValue)")
        let descriptor = open(marker.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        close(descriptor)
        kill(getpid(), SIGKILL)
    }
}

extension HandOverStep: Comparable {
    public static func < (lhs: HandOverStep, rhs: HandOverStep) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}
