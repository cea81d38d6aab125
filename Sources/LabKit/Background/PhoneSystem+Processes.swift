import Foundation
import LabVocabulary

/// The phone's children, each a process of this same executable in a role of its own, and what
/// the phone gathers from them: their peak memory, their exchanges.
extension PhoneSystem {
    func start(_ role: PhoneRole, settings: PhoneSettings) -> Process? {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = []
        process.environment = settings.environment(role: role)
        process.standardInput = FileHandle.nullDevice
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
}

/// One line of the service's journal of tasks created.
struct CreatedTask: Codable {
    var id: String
    var askedByUser: Bool
    var at: Date
}
