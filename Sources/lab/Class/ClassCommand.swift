import ArgumentParser
import Dispatch
import Foundation
import LabClass
import LabHarness
import LabKit
import LabReport
import LabVocabulary
import NIOCore
import Synchronization

/// `lab class`: a class's live page for the teacher, and its grades for the school's tools.
struct Class: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a class: students submit their checks, the teacher watches one page, grades leave as CSV, JUnit, Exercism or Gradescope files.",
        discussion: "The teacher's guide is docs/class.md.",
        subcommands: [ServeClass.self, Submit.self, Export.self, Release.self]
    )

    struct ServeClass: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "serve",
            abstract: "Run the class server until Ctrl-C; it prints the line students type and the teacher's page.",
            discussion: "Exit status: 64 for an address it cannot listen on, 73 for a data folder it cannot write, 69 for a port in use.")

        @Option(help: ArgumentHelp("Where to listen. 0.0.0.0:8080 opens the server to the classroom's network.", valueName: "HOST:PORT"))
        var listen = "127.0.0.1:8080"

        @Option(help: ArgumentHelp("The class's folder; starting again with the same one continues the class.", valueName: "FOLDER"))
        var data = "lab-class"

        func run() throws {
            let (address, folder, store, server) = try open()
            // Straight to the descriptor: print() would buffer it when stdout is a pipe.
            FileHandle.standardOutput.write(Data(try welcome(address, folder, store, port: server.port).joined(separator: "\n").utf8))

            let serving = Task { try await server.serve() }
            Signals.waitForTermination()
            FileHandle.standardOutput.write(Data("\nStopping; the class is kept in \(folder.path).\n".utf8))
            try? blocking {
                await server.close()
                serving.cancel()
            }
        }

        /// The address, the class's folder and store, and the server listening there; bad input
        /// and a busy port are one line with their exit status.
        private func open() throws -> (SocketAddress, URL, ClassStore, ClassServer) {
            let address: SocketAddress
            do {
                address = try ListenAddress.parse(listen)
            } catch {
                throw ClassCommandError(64, "--listen: \(error)")
            }
            guard !data.isEmpty else { throw ClassCommandError(64, "--data: give a folder for the class") }
            let folder = URL(fileURLWithPath: data)
            let store: ClassStore
            do {
                store = try ClassStore(folder: folder)
            } catch {
                throw ClassCommandError(73, error.description)
            }
            do {
                return (address, folder, store, try blocking { try await ClassServer.bind(address, store: store) })
            } catch let error as ClassListenError {
                switch error {
                case .badAddress: throw ClassCommandError(64, "--listen: \(error)")
                case .portInUse, .cannotListen: throw ClassCommandError(69, error.description)
                }
            }
        }

        /// What the teacher reads at the start: who can reach the server, the class code and the
        /// commands students type, the teacher's page, and how to export grades.
        private func welcome(_ address: SocketAddress, _ folder: URL, _ store: ClassStore, port: Int) throws -> [String] {
            let credentials = try store.credentials()
            let hosts = ListenAddress.hostsToShow(address)
            var lines: [String] = []
            if ListenAddress.isLoopback(address) {
                lines.append("Download Lab class server on this machine only (\(hosts[0]):\(port)); "
                             + "--listen 0.0.0.0:\(port) opens it to the classroom's network.")
            } else {
                lines.append("Download Lab class server OPEN TO THE NETWORK on \(address.ipAddress ?? listen):\(port): "
                             + "anyone who can reach this machine can submit with the class code.")
            }
            let grid = try store.gridNow()
            if grid.submissions > 0 {
                lines.append("Continuing the class in \(folder.path): \(grid.students.count) students, \(grid.submissions) submissions.")
            } else {
                lines.append("The class is kept in \(folder.path); start again with the same --data to continue it.")
            }
            lines += ["", "Class code: \(credentials.classCode). Students type:"]
            for host in hosts {
                let base = "http://\(ListenAddress.urlHost(host)):\(port)"
                let submit = ["--submit", "\(base)/class/\(credentials.classCode)", "--name", "Your Name"]
                lines.append("  swift run " + ShellWord.line(["lab", "exercise", "check", "--all"] + submit))
                lines.append("  swift run " + ShellWord.line(["lab", "compare"] + submit))
            }
            lines += ["", "The teacher's page (keep this address to yourself):"]
            for host in hosts { lines.append("  http://\(ListenAddress.urlHost(host)):\(port)/teacher/\(credentials.teacherToken)") }
            return lines + ["", "Grades (--format csv, junit, exercism or gradescope):",
                            "  swift run " + ShellWord.line(["lab", "class", "export", "--data", data, "--format", "csv", "-o", "grades.csv"]), "",
                            "Press Ctrl-C to stop.", ""]
        }
    }

    struct Submit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send the results that could not be submitted when they were made (they wait in .build/class-outbox).",
            discussion: "Exit status: 0 when every waiting result was sent (or none waited), 69 when one could not be, "
                + "65 when the outbox holds something that is not a result (left alone).")

        @Argument(help: ArgumentHelp("The class's address, http://HOST:PORT/class/CODE.", valueName: "URL"))
        var address: String

        @Option(help: "Your name on the class's page (at most \(ClassSubmission.longestName) characters).")
        var name: String

        func validate() throws {
            _ = try ClassAddress.parse(address, option: "the address")
            if let problem = ClassSubmission.problem(withName: name) { throw ValidationError("--name: \(problem)") }
        }

        func run() throws {
            let address = try ClassAddress.parse(address, option: "the address")
            let outbox = ClassOutbox.here()
            var (waiting, strays) = outbox.waiting()
            // Results another copy of the package made carry its key: sent under this name, they
            // would claim it for someone else. They stay where they are.
            if !waiting.isEmpty {
                let key = outbox.studentKey()
                strays += waiting.filter { $0.submission.studentKey != key }.map { $0.file.lastPathComponent + " (another copy's)" }
                waiting.removeAll { $0.submission.studentKey != key }
            }
            // What is in the outbox but is no submission is said, not skipped in silence.
            let strayLine = strays.isEmpty ? nil : "\(strays.count) entr\(strays.count == 1 ? "y" : "ies") in \(outbox.folder.path) "
                + "\(strays.count == 1 ? "is" : "are") not this copy's submission\(strays.count == 1 ? "" : "s"), left alone: \(strays.prefix(3).joined(separator: ", "))"
                + (strays.count > 3 ? ", …" : "")
            guard !waiting.isEmpty else {
                if let strayLine { throw ClassCommandError(65, strayLine) }
                Console.output("nothing waits to be submitted")
                return
            }
            var failed = 0
            for (file, var submission) in waiting {
                submission.name = name
                do {
                    let answer = try ClassOutbox.send(submission, to: address)
                    try? FileManager.default.removeItem(at: file)
                    Console.output("\(file.lastPathComponent): \(answer)")
                } catch {
                    failed += 1
                    Console.error("\(file.lastPathComponent): not submitted: \(error)")
                }
            }
            if failed > 0 { throw ClassCommandError(69, "\(failed) of \(waiting.count) still wait in \(outbox.folder.path)") }
            if let strayLine { throw ClassCommandError(65, strayLine) }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the class's grades for a school's tools: csv, junit, exercism or gradescope.",
            discussion: "csv and junit are one file (stdout without -o); exercism and gradescope write FOLDER/<student>/results.json.")

        @Option(help: ArgumentHelp("The class's folder, as given to `lab class serve`.", valueName: "FOLDER"))
        var data = "lab-class"

        @Option(help: "csv, junit, exercism or gradescope.")
        var format: ClassExportFormat

        @Option(name: [.customShort("o"), .long], help: ArgumentHelp("Where to write: a file for csv and junit, a folder for the others.", valueName: "PATH"))
        var output: String?

        func validate() throws {
            if !format.isOneFile && output == nil { throw ValidationError("--format \(format.rawValue) writes a folder per student: give -o FOLDER") }
        }

        func run() throws {
            let folder = URL(fileURLWithPath: data)
            guard FileManager.default.fileExists(atPath: folder.appendingPathComponent(ClassStore.fileName).path) else {
                throw ClassCommandError(66, "no class in \(folder.path): give the --data folder `lab class serve` used")
            }
            let grid: ClassGrid
            do {
                grid = try ClassStore(folder: folder).gridNow()
            } catch {
                throw ClassCommandError(66, "cannot read the class in \(folder.path): \(error)")
            }
            do {
                switch format {
                case .csv, .junit:
                    let text = format == .csv ? ClassExport.csv(grid) : ClassExport.junit(grid)
                    if let output {
                        try OutputFile.checkReplaceable(URL(fileURLWithPath: output))
                        try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
                        Console.output("\(output): \(grid.students.count) students, \(grid.columns.count) checks")
                    } else {
                        FileHandle.standardOutput.write(Data(text.utf8))
                    }
                case .exercism, .gradescope:
                    let root = URL(fileURLWithPath: output!)
                    // A link given as -o would carry every file elsewhere, as it would for csv.
                    try OutputFile.makeOwnFolder(root)
                    for student in grid.students {
                        let studentFolder = root.appendingPathComponent(ClassExport.folderName(for: student))
                        try FileManager.default.createDirectory(at: studentFolder, withIntermediateDirectories: true)
                        // A link planted where a student's folder goes would carry the file elsewhere.
                        let kind = try FileManager.default.attributesOfItem(atPath: studentFolder.path)[.type] as? FileAttributeType
                        guard kind == .typeDirectory else {
                            throw ClassCommandError(73, "\(studentFolder.path) is not a folder; remove it, or export into another -o")
                        }
                        let file = studentFolder.appendingPathComponent("results.json")
                        try OutputFile.checkReplaceable(file)
                        let json = format == .exercism ? ClassExport.exercism(grid, student: student) : ClassExport.gradescope(grid, student: student)
                        try json.write(to: file, options: .atomic)
                    }
                    Console.output("\(root.path): results.json for \(grid.students.count) students")
                }
            } catch let error as any CommandExitStatus {
                throw error
            } catch {
                throw ClassCommandError(73, "cannot write \(output ?? "the export"): \(systemReason(of: error))")
            }
        }
    }
}

extension Class {
    struct Release: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Let another copy of the lab submit under a student's name, keeping what was submitted under it.",
            discussion: "The first copy to submit under a name holds it, and each copy holds one name. A student whose copy was lost, "
                + "or who typed a name by mistake, asks the teacher: the next copy to submit under the released name holds it.")

        @Argument(help: "The name, as the class's page shows it.")
        var name: String

        @Option(help: ArgumentHelp("The class's folder, as given to `lab class serve`.", valueName: "FOLDER"))
        var data = "lab-class"

        func run() throws {
            let folder = URL(fileURLWithPath: data)
            guard FileManager.default.fileExists(atPath: folder.appendingPathComponent(ClassStore.fileName).path) else {
                throw ClassCommandError(66, "no class in \(folder.path): give the --data folder `lab class serve` used")
            }
            let released: Bool
            do {
                released = try ClassStore(folder: folder).release(name)
            } catch {
                throw ClassCommandError(74, "cannot release \"\(name)\" in \(folder.path): \(error)")
            }
            guard released else { throw ClassCommandError(65, "the class in \(folder.path) has no student named \"\(name)\"") }
            Console.output("released \"\(name)\": the next copy of the lab to submit under it holds it")
        }
    }
}

extension ClassExportFormat: ExpressibleByArgument {}

/// A one-line error with the exit status that says which kind it is (sysexits(3)).
struct ClassCommandError: Error, CustomStringConvertible, CommandExitStatus {
    let exitStatus: Int32
    let description: String

    init(_ exitStatus: Int32, _ description: String) {
        self.exitStatus = exitStatus
        self.description = description
    }
}

/// Runs async work from a command's synchronous `run()`, on the main thread, which the async
/// work never needs.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do {
            let value = try await body()
            result.withLock { $0 = .success(value) }
        } catch {
            result.withLock { $0 = .failure(error) }
        }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}
