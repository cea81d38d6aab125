import Foundation
import LabKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabVocabulary
import Synchronization

/// The phone: what iOS does around lesson 09's app. Each attempt is one tap on Start: the user
/// launches the app and taps it; then the phone plays the life script, keeps the transfer service
/// running, and relaunches (or wakes) the app when the service has events for it. The attempt ends
/// once the app is not running and nothing is left to happen: with the file, or without it, and
/// then the user may launch the app and tap Start again.
final class PhoneSystem: @unchecked Sendable {
    // @unchecked: used by the harness's one thread.
    let run: LessonRun
    let phone: PhoneFolder
    let settings: PhoneSettings
    private var eventsLeft: [LifeScript.Event]
    var service: Process?
    var app: Process?
    var appSuspended = false
    var record: BackgroundRecord
    /// Ended tasks the app was already relaunched or woken for: not again.
    var relaunchedFor: Set<String> = []
    /// Each child's exchanges merged into the run's log so far.
    var exchangesMerged: [String: Int] = [:]
    private var stalledSince: Date?
    private(set) var forceQuitAt: Date?
    var forceQuitSinceTheUserLaunchedIt = false
    private var attempt = 0
    /// The phone's folder is this run's while this is open (`PhoneFolder.takeForThisRun()`).
    private var folderLock: Int32 = -1

    init(run: LessonRun, background: BackgroundRun) {
        self.run = run
        phone = PhoneFolder(forDownloadTo: run.file)
        settings = PhoneSettings(phone: phone.root.path, storyToStandardError: background.storyToStandardError, quiet: background.quiet,
                                 writeDelayMicroseconds: background.writeDelayMicroseconds,
                                 idleSeconds: background.limits.idleSeconds, maxFileSize: background.limits.maxFileSize,
                                 diskCapacity: background.diskCapacity, eventsDelaySeconds: background.eventsDelaySeconds)
        eventsLeft = background.life.events
        record = BackgroundRecord(life: background.life.description)
    }

    var backgroundRecord: BackgroundRecord { record }

    func playAttempt() -> AttemptResult {
        attempt += 1
        do {
            try phone.make()
            if attempt == 1 {
                folderLock = try phone.takeForThisRun()
                forgetTasksForOtherURLs()
                for name in (try? FileManager.default.contentsOfDirectory(atPath: phone.life.path)) ?? [] {
                    try? FileManager.default.removeItem(at: phone.life.appendingPathComponent(name))
                }
                try LifePoints.write(eventsLeft.compactMap(\.percent), to: phone)
                // Armed before the app launches: its first resume may come at once.
                while let first = eventsLeft.first, first.action.isACrash {
                    eventsLeft.removeFirst()
                    play(first)
                }
            }
            try writeWhole(0, to: backgroundLaunchesFile)
        } catch let error as DownloadError {
            return .failed(error)
        } catch {
            return .failed(DownloadError.localIO(path: phone.root.path, reason: describe(error)))
        }
        guard keepServiceRunning() else { return .failed(DownloadError.serviceKeepsDying(restarts: record.serviceRestarts)) }
        launchApp(byUser: true, pressStart: true)
        let result = playUntilQuiet()
        mergeExchanges()
        readPeakMemory()
        // The folder goes once the file is in place; without it, what is left stays for the next run.
        if case .finished = result, FileManager.default.fileExists(atPath: run.file.path) { stopService(removingItsFolder: true) }
        return result
    }

    /// Tasks an earlier run left for another URL (another server, another file) are no use to
    /// this one: the service is not running yet, and they are forgotten with a line.
    private func forgetTasksForOtherURLs() {
        let stale = phone.records().filter { $0.url != run.url.absoluteString }
        guard !stale.isEmpty else { return }
        run.log("\(stale.count) task\(stale.count == 1 ? "" : "s") an earlier run left for another URL (\(ShownURL.brief(stale[0].url))) "
                + "\(stale.count == 1 ? "is" : "are") forgotten")
        for task in stale { phone.forget(task.id) }
    }

    private var backgroundLaunchesFile: URL { phone.root.appendingPathComponent("service/background-launches.json") }

    // MARK: The loop

    private func playUntilQuiet() -> AttemptResult {
        let handedOverBefore = record.filesHandedOver
        var quietRounds = 0
        while true {
            usleep(10_000)
            guard keepServiceRunning() else { return .failed(DownloadError.serviceKeepsDying(restarts: record.serviceRestarts)) }
            if let misuse = reapApp() { return .failed(DownloadError.misuse(misuse)) }
            playLife()
            endASuspendedAppThatNothingMoves()
            deliverEvents()
            OtherApp.takeWhatHasEnded(in: phone)
            countWhatTheServiceWasAsked()
            // Quiet: no app, no transfer, nothing to relaunch for, no event that can still happen.
            let quiet = app == nil && !serviceHasLiveTasks() && eventsDue().isEmpty && !eventsCanStillHappen()
            quietRounds = quiet ? quietRounds + 1 : 0
            if quietRounds >= 5 { break }
        }
        // Counted as each attempt ends: the next attempt's tap on Start makes a session that hears it.
        record.forceQuitCancellationsUnheard += phone.appRecords().filter {
            $0.cancelledReason == NSURLErrorCancelledReasonUserForceQuitApplication && !isTold($0.id)
        }.count
        if record.filesHandedOver > handedOverBefore { return .finished }
        // A disk that refuses the bytes, or a response past the limit, does so again: no second attempt.
        if let failed = phone.appRecords().last(where: { $0.state == .failed && $0.failure != .network }) {
            let reason = failed.errorMessage ?? "the transfer failed"
            return .failed(failed.failure == .disk ? DownloadError.localIO(path: phone.partialFile(failed.id).path, reason: reason)
                                                   : DownloadError.responseTooLarge(reason))
        }
        return .failed(DownloadError.appGaveNoFile(
            "the app's life ended without the file (\(lastWords()))"))
    }

    private func lastWords() -> String {
        if record.forceQuits > 0 { return "the user force-quit it" }
        if let failed = phone.appRecords().last(where: { $0.state == .failed }) { return failed.errorMessage ?? "the transfer failed" }
        return "the download ended with the app"
    }

    deinit {
        if let service, service.isRunning { kill(service.processIdentifier, SIGKILL) }
        if let app, app.isRunning { kill(app.processIdentifier, SIGKILL) }
        if folderLock >= 0 { close(folderLock) }
    }

    // MARK: The app

    func launchApp(byUser: Bool, pressStart: Bool = false, eventsFor identifiers: [String] = []) {
        var appSettings = settings
        appSettings.url = run.url.absoluteString
        appSettings.file = run.file.path
        appSettings.variant = run.variant
        appSettings.pressStart = pressStart
        appSettings.backgroundEventsFor = identifiers
        appSettings.inBackground = !byUser
        for name in (try? FileManager.default.contentsOfDirectory(atPath: phone.appReports.path)) ?? [] {
            try? FileManager.default.removeItem(at: phone.appReports.appendingPathComponent(name))
        }
        if byUser {
            record.launchesByUser += 1
            forceQuitSinceTheUserLaunchedIt = false
            // The app is in front: the rate limiter starts again from nothing.
            try? writeWhole(0, to: backgroundLaunchesFile)
            run.log(pressStart ? "the user launches the app" : "the user opens the app again")
        } else {
            record.relaunchesForEvents += 1
            let launches = (readWhole(Int.self, from: backgroundLaunchesFile) ?? 0) + 1
            try? writeWhole(launches, to: backgroundLaunchesFile)
            run.events.note("relaunched for events")
            run.log("the system relaunches the app in the background for the events of \(identifiers.joined(separator: ", "))")
        }
        app = start(.app, settings: appSettings)
        launchedForEvents = identifiers
        appSuspended = false
    }

    var launchedForEvents: [String] = []

    /// The app's process, if it has ended: what its launch came to. A rule it broke is returned.
    /// An end the phone did not cause (a crash, a kill from outside) is told, `endedByThePhone` false.
    private func reapApp(endedByThePhone: Bool = false) -> String? {
        guard let app, !app.isRunning else { return nil }
        self.app = nil
        appSuspended = false
        let crashed = !endedByThePhone && app.terminationReason == .uncaughtSignal
        readAppReports(judgingTheLaunch: !crashed)
        if crashed {
            run.log("the app ended (signal \(app.terminationStatus))")
            // The events it did not get to wait for it: the phone launches it again for them.
            crashesInEvents += 1
            if crashesInEvents <= Self.relaunchesAfterCrashes {
                relaunchedFor.subtract(phone.appRecords().filter { $0.state.hasEnded && !isTold($0.id) }.map(\.id))
            }
        }
        if app.terminationReason == .exit, app.terminationStatus == ExitStatus.misuse.rawValue {
            return OutputFile.readBounded(phone.appReports.appendingPathComponent("misuse.txt"), limit: 4096).map { String(decoding: $0, as: UTF8.self) }
                ?? "the app broke a rule of the API"
        }
        return nil
    }

    /// An app that crashes is launched again for the events it did not get, this often per run.
    static let relaunchesAfterCrashes = 3
    private var crashesInEvents = 0

    /// What the app's process left: its sessions, and each completion handler. A launch that
    /// crashed is not judged on its handlers: it was given no time to call them.
    private func readAppReports(judgingTheLaunch: Bool = true) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: phone.appReports.path)) ?? []
        for name in names where name.hasPrefix("sessions-made-") {
            let count = readWhole(Int.self, from: phone.appReports.appendingPathComponent(name)) ?? 0
            record.mostSessionsPerIdentifier = max(record.mostSessionsPerIdentifier, count)
        }
        record.filesHandedOver += readWhole(Int.self, from: phone.appReports.appendingPathComponent("handed-over.json")) ?? 0
        ProgramsStarted.note(startedElsewhere: FileManager.default.fileExists(atPath: AppProcess.startedAProgramFile(in: phone).path))
        defer { launchedForEvents = [] }
        guard judgingTheLaunch else { return }
        for identifier in launchedForEvents {
            if let report = readWhole(HandlerReport.self, from: AppProcess.handlerReport(identifier, in: phone)) {
                if !report.onMainQueue { record.handlersOffTheMainQueue += 1 }
                if !report.afterTheEvents {
                    record.handlersBeforeTheEvents += 1
                    run.log("the completion handler for \(identifier) was called before the session had delivered its events")
                }
            } else {
                record.handlersNeverCalled += 1
                run.log("the completion handler for \(identifier) was never called")
            }
        }
        if !launchedForEvents.isEmpty, phone.records().contains(where: { launchedForEvents.contains($0.session) && $0.state.hasEnded && !isTold($0.id) }) {
            record.launchesWithEventsLeft += 1
            run.log("events of \(launchedForEvents.joined(separator: ", ")) are still waiting: the app never made the session that receives them")
        }
    }

    func isTold(_ id: String) -> Bool {
        FileManager.default.fileExists(atPath: phone.tasks.appendingPathComponent(id + ".told").path)
    }

    // MARK: The life script

    /// No event is left, the app is suspended and nothing runs in the service: iOS would end the
    /// app sooner or later to free memory, and so does the phone, after half a second.
    private func endASuspendedAppThatNothingMoves() {
        guard eventsLeft.isEmpty, let app, appSuspended, !serviceHasLiveTasks(), eventsDue().isEmpty else {
            if eventsLeft.isEmpty { idleSuspendedSince = nil }
            return
        }
        let since = idleSuspendedSince ?? Date()
        idleSuspendedSince = since
        guard Date().timeIntervalSince(since) >= 0.5 else { return }
        idleSuspendedSince = nil
        kill(app.processIdentifier, SIGKILL)
        app.waitUntilExit()
        run.log("the system ends the suspended app to free memory (SIGKILL): nothing of it runs in the background")
        _ = reapApp(endedByThePhone: true)
    }

    private var idleSuspendedSince: Date?

    private func eventsCanStillHappen() -> Bool { !eventsLeft.isEmpty }

    /// The tap on Start the phone asked for, while the file is held for it.
    private var startTap: StartTap?

    /// Whether a tap of Start is still awaited, or its answer held; after that (or a wait too
    /// long), the held point is released.
    private func awaitingStartTap() -> Bool {
        guard var tap = startTap else { return false }
        let answered = FileManager.default.fileExists(atPath: AppProcess.startAnsweredFile(in: phone).path)
        let step = tap.step(now: Date(), answered: answered)
        startTap = tap
        guard case .release(let answered) = step else { return true }
        if !answered { run.log("the app did not answer the tap on Start within \(Int(StartTap.answerPatience)) s") }
        startTap = nil
        if let point = tap.point, eventsLeft.first?.percent != point { LifePoints.release(point, in: phone) }
        return false
    }

    private func playLife() {
        guard !awaitingStartTap(), let event = eventsLeft.first else { return }
        guard let percent = event.percent else {
            // An event with no point comes as soon as the event before it has: a crash once it
            // has struck, or once the app it was armed for has ended without it.
            if app != nil, CrashAtStart.isArmed(in: phone) { return }
            eventsLeft.removeFirst()
            play(event)
            return
        }
        if LifePoints.reached(percent, in: phone) {
            stalledSince = nil
            eventsLeft.removeFirst()
            play(event)
            if event.action == .start { startTap?.point = percent; return }
            if eventsLeft.first?.percent != percent { LifePoints.release(percent, in: phone) }
            return
        }
        // Nothing moves the file on: the app is suspended or gone, and nothing runs in the
        // service. The system does as it pleases meanwhile: the event comes all the same.
        let stalled = (app == nil || appSuspended) && !serviceHasLiveTasks()
        guard stalled else { stalledSince = nil; return }
        let since = stalledSince ?? Date()
        stalledSince = since
        guard Date().timeIntervalSince(since) >= 0.5 else { return }
        stalledSince = nil
        eventsLeft.removeFirst()
        run.log("no download moves at \(percent)%: the app is \(app == nil ? "not running" : "suspended"), and nothing runs in the background")
        play(event)
        if eventsLeft.first?.percent != percent { LifePoints.release(percent, in: phone) }
    }

    private func play(_ event: LifeScript.Event) {
        let at = event.percent.map { " at \($0)%" } ?? ""
        switch event.action {
        case .suspend:
            guard let app, !appSuspended else { return run.log("\(event): the app is not running in front") }
            kill(app.processIdentifier, SIGSTOP)
            appSuspended = true
            run.log("the user leaves the app\(at): the system suspends it (SIGSTOP)")
            run.events.note("suspended")
        case .terminate:
            guard let app else { return run.log("\(event): the app is not running") }
            let wasSuspended = appSuspended
            kill(app.processIdentifier, SIGKILL)
            app.waitUntilExit()
            run.log("the system ends the \(wasSuspended ? "suspended " : "")app\(at) to free memory (SIGKILL)")
            run.events.note("ended")
            _ = reapApp(endedByThePhone: true)
        case .forceQuit:
            guard let app else { return run.log("\(event): the app is not running") }
            kill(app.processIdentifier, SIGKILL)
            app.waitUntilExit()
            record.forceQuits += 1
            forceQuitAt = Date()
            run.log("the user force-quits the app\(at) in the app switcher")
            run.events.note("force-quit")
            _ = reapApp(endedByThePhone: true)
            forceQuitSinceTheUserLaunchedIt = true
            // Carried out before the transfer goes on past this point: a transfer that finished in
            // between would not be cancelled.
            if let request = try? ServiceRequest(kind: .forceQuit).send(to: phone) {
                let deadline = Date().addingTimeInterval(5)
                while FileManager.default.fileExists(atPath: request.path), service?.isRunning == true, Date() < deadline { usleep(5_000) }
            }
        case .relaunch:
            userOpensTheApp(at)
        case .crashAtStart, .crashAfterStart:
            guard (try? CrashAtStart.arm(event.action, in: phone)) != nil else { return run.log("\(event): the phone's folder cannot be written") }
            run.log("the app will crash as it next starts a task, " + (event.action == .crashAtStart ? "before the system has it" : "once the system has it"))
        case .otherApp:
            do {
                try OtherApp.startDownload(of: run.url, in: phone)
                run.log("another app on the phone starts a background download of the same file")
            } catch {
                run.log("\(event): the phone's folder cannot be written")
            }
        case .start:
            userOpensTheApp(at)
            // The app taps Start once it is up; the transfer waits at this point until it has, and a while after.
            try? FileManager.default.removeItem(at: AppProcess.startAnsweredFile(in: phone))
            try? writeWhole(true, to: AppProcess.startTapFile(in: phone))
            startTap = StartTap(askedAt: Date())
        }
    }

    /// Launched if it is not running, brought back if suspended.
    private func userOpensTheApp(_ at: String) {
        if let app, appSuspended {
            kill(app.processIdentifier, SIGCONT)
            appSuspended = false
            try? writeWhole(0, to: backgroundLaunchesFile)
            run.log("the user brings the app back\(at)")
            run.events.note("opened")
        } else if app == nil {
            launchApp(byUser: true)
        }
    }
}
