import ArgumentParser
import LabKit
import LabVocabulary

extension ParsableArguments {
    /// Ends the process after a parsing or running error. `--help` prints in full on stdout;
    /// anything else gets one line on stderr (not ArgumentParser's usage dump) and its exit code.
    public static func exitReportingOneLine(_ error: any Error, command: String, help: (() -> String)? = nil) -> Never {
        let code = (error as? any CommandExitStatus).map { ExitCode($0.exitStatus) } ?? exitCode(for: error)
        if code == .success {
            guard let help else { exit(withError: error) }
            Console.output(help())
            exit(withError: ExitCode.success)
        }
        let message = message(for: error)
        if !message.isEmpty { Console.error("\(command): \(message)") }
        exit(withError: ExitCode(code.rawValue))
    }
}

extension ParsableCommand {
    /// `main()`, with bad input reported in one line.
    public static func mainReportingOneLineErrors() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            exitReportingOneLine(error, command: commandPath())
        }
    }

    /// "lab compare" rather than "lab" when the first argument names a subcommand (and
    /// "lab exercise check" for a subcommand of that one), so the line says whose error it is.
    private static func commandPath() -> String {
        var path = [configuration.commandName ?? "\(Self.self)"]
        var subcommands = configuration.subcommands
        for argument in CommandLine.arguments.dropFirst() {
            guard let next = subcommands.first(where: { $0._commandName == argument }) else { break }
            path.append(argument)
            subcommands = next.configuration.subcommands
        }
        return path.joined(separator: " ")
    }
}
