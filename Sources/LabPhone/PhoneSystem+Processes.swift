import Foundation
import LabKit
import LabVocabulary

/// The phone's children, each a process of this same executable in a role of its own, and what
/// the phone gathers from them: their peak memory, their exchanges.
extension PhoneSystem {
    // MARK: The service

    /// The most restarts of the service in one run: a service that dies at every start (a disk it
    /// cannot write, say) is not started for ever.
    static let restartLimit = 100

    /// False once the service has died more often than `restartLimit`.
    @discardableResult
    func keepServiceRunning() -> Bool {
        if let service, service.isRunning { return true }
        if let service {
            guard record.serviceRestarts < Self.restartLimit else { return false }
            record.serviceRestarts += 1
            let how = service.terminationReason == .uncaughtSignal ? "signal \(service.terminationStatus)" : "exit \(service.terminationStatus)"
            run.log("the transfer service ended (\(how)): the system starts it again")
        }
        service = start(.service, settings: settings)
        return service != nil
    }

    func stopService(removingItsFolder remove: Bool) {
        // SIGKILL: its state is written to survive one, and a SIGTERM may be blocked in a mask the
        // service inherited.
        if let service, service.isRunning {
            kill(service.processIdentifier, SIGKILL)
            service.waitUntilExit()
        }
        service = nil
        if remove { try? FileManager.default.removeItem(at: phone.root) }
    }

    func serviceHasLiveTasks() -> Bool {
        phone.records().contains { !$0.state.hasEnded }
            || ((try? FileManager.default.contentsOfDirectory(atPath: phone.requests.path)) ?? []).contains { $0.hasSuffix(".json") }
    }

    // MARK: Starting a child

    func start(_ role: PhoneRole, settings: PhoneSettings) -> Process? {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = []
        process.environment = settings.environment(role: role)
        process.standardInput = FileHandle.nullDevice
        ProgramsStarted.beforeTheLabStartsAProcess()
        do {
            try process.run()
            return process
        } catch {
            run.log("cannot start the \(role): \(describe(error))")
            return nil
        }
    }

    /// The highest peak of any app process and of any service process so far.
    func readPeakMemory() {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: phone.root.path)) ?? [] where name.hasPrefix("peak-rss-") {
            let peak = readWhole(Int64.self, from: phone.root.appendingPathComponent(name)) ?? 0
            if name.hasPrefix("peak-rss-app-") { record.appPeakRSSBytes = max(record.appPeakRSSBytes, peak) }
            if name.hasPrefix("peak-rss-service-") { record.servicePeakRSSBytes = max(record.servicePeakRSSBytes, peak) }
        }
    }

    /// The children's exchanges, added to the run's record once (their story told them already).
    func mergeExchanges() {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: phone.root.path)) ?? []).filter { $0.hasPrefix("exchanges-") }.sorted()
        for name in names {
            guard let exchanges = readWhole([HTTPExchange].self, from: phone.root.appendingPathComponent(name)) else { continue }
            let merged = exchangesMerged[name, default: 0]
            guard exchanges.count > merged else { continue }
            run.exchangeLog.adopt(Array(exchanges[merged...]))
            exchangesMerged[name] = exchanges.count
        }
    }

    /// Tasks created, from the service's journal: all of them, and those started after a
    /// force-quit by a launch where nobody tapped Start.
    func countWhatTheServiceWasAsked() {
        let journal = phone.root.appendingPathComponent("service/created.jsonl")
        // A line a task: a journal past the bound was not written by the service alone, and is not counted.
        guard let text = OutputFile.readBounded(journal).map({ String(decoding: $0, as: UTF8.self) }) else { return }
        let entries = text.split(separator: "\n").compactMap { try? JSONDecoder().decode(CreatedTask.self, from: Data($0.utf8)) }
        record.backgroundTasks = entries.count
        if let forceQuitAt {
            record.tasksStartedUnaskedAfterForceQuit = entries.filter { !$0.askedByUser && $0.at > forceQuitAt }.count
        }
    }
}

/// One line of the service's journal of tasks created.
struct CreatedTask: Codable {
    var id: String
    var askedByUser: Bool
    var at: Date
}
