import Foundation
import LabVocabulary

/// `other-app` in the life script: another app on the phone downloads the same file in the
/// background. Apple's transfer service runs the tasks of every app side by side, and a session
/// lists only its own app's; so the service's records, its partial files, its process and its
/// connections are no sign that this app has a download running. The phone asks the service for
/// the task as an app's session would, and takes the file away once it is whole, as that app would.
enum OtherApp {
    /// The other app's background session: one no lesson's app uses.
    static let sessionIdentifier = "com.example.other-app.background-downloads"

    static func owns(_ record: TransferRecord) -> Bool { record.session == sessionIdentifier }

    /// Asks the service to download `url` for the other app.
    static func startDownload(of url: URL, in phone: PhoneFolder) throws {
        let task = TransferRecord(id: UUID().uuidString, number: 1, session: sessionIdentifier, url: url.absoluteString, state: .running)
        try ServiceRequest(kind: .create, task: task).send(to: phone)
    }

    /// The other app's tasks that have ended: it hears of them in its own launch, and the phone
    /// removes their files for it.
    static func takeWhatHasEnded(in phone: PhoneFolder) {
        for record in phone.records() where owns(record) && record.state.hasEnded { phone.forget(record.id) }
    }
}
