import Foundation
import LabKit
import LabVocabulary

/// Events for the app: ended tasks whose events are due, and the relaunch or the wake that
/// delivers them, as iOS delivers a background session's events.
extension PhoneSystem {
    /// Ended tasks whose events wait for an app that is not running or is suspended, and that
    /// the app was not yet relaunched for. A force-quit's cancellations relaunch nothing.
    func eventsDue() -> [TransferRecord] {
        // After a force-quit the system relaunches nothing until the user launches the app.
        guard app == nil || appSuspended, !forceQuitSinceTheUserLaunchedIt else { return [] }
        return phone.appRecords().filter { record in
            record.state.hasEnded && !isTold(record.id) && !relaunchedFor.contains(record.id)
                && record.cancelledReason != NSURLErrorCancelledReasonUserForceQuitApplication
        }
    }

    func deliverEvents() {
        let due = eventsDue()
        guard !due.isEmpty else { return }
        relaunchedFor.formUnion(due.map(\.id))
        let identifiers = Array(Set(due.map(\.session))).sorted()
        if let app, appSuspended {
            record.wakes += 1
            try? writeWhole(identifiers, to: phone.appReports.appendingPathComponent("wake.json"))
            launchedForEvents = identifiers
            kill(app.processIdentifier, SIGCONT)
            appSuspended = false
            run.events.note("woken for events")
            run.log("the system wakes the app in the background for the events of \(identifiers.joined(separator: ", "))")
        } else {
            launchApp(byUser: false, eventsFor: identifiers)
        }
    }
}
