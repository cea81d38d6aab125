import Foundation
import LabHarness
import LabKit
import LabVocabulary

extension Lesson {
    /// Runs lesson 09, whose app lives in a process of its own: this process is the phone, which
    /// starts the app's process and the transfer service's (this same program, in those roles)
    /// and exits with an `ExitStatus` once the app's life has brought the file, or has not.
    public func run(startingServer startServer: @escaping () throws -> any LessonServer,
                    _ makeApp: (LessonRun) -> any BackgroundApp) -> Never {
        if let named = ProcessInfo.processInfo.environment[PhoneRole.variable] {
            guard let role = PhoneRole(rawValue: named), let settings = PhoneSettings.fromEnvironment() else {
                Console.error("\(command): \(PhoneRole.variable)=\(named.printable.prefix(40)) is not what the phone tells its processes")
                exit(ExitStatus.usage.rawValue)
            }
            switch role {
            case .service: TransferService.main(settings)
            case .app: AppProcess.main(settings, make: makeApp)
            }
        }
        runAttempts(startServer) { run, _ in
            guard let background = run.background else { preconditionFailure("lesson 09's run has no life script") }
            let phone = PhoneSystem(run: run, background: background)
            return {
                defer { background.record.withLock { $0 = phone.backgroundRecord } }
                return phone.playAttempt()
            }
        }
    }
}
