import ArgumentParser
import Dispatch
import Foundation
import LabFixtures
import LabHarness
import LabKit
import LabServer
import LabVocabulary

/// `lab serve`: the lab's server in the foreground, until Ctrl-C.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the lab's HTTP server until Ctrl-C.",
        discussion: HelpText.faultSyntax + "\n\n" + HelpText.upload
    )

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on (0 picks a free one).")
    var port = 8080

    func validate() throws {
        guard (0...65535).contains(port) else {
            throw ValidationError("--port must be between 0 and 65535")
        }
    }

    func run() throws {
        let server: LabServer
        do {
            server = try LabServer.start(host: host, port: port)
        } catch {
            // One line, no stack trace: the message already says what went wrong.
            Console.error("lab serve: \(error)")
            throw ExitCode.failure
        }
        printBanner(server)
        Signals.waitForTermination()
        FileHandle.standardOutput.write(Data("\nStopping.\n".utf8))
        server.stop()
    }

    private func printBanner(_ server: LabServer) {
        let base = server.baseURL.absoluteString
        var lines = ["Download Lab server listening on \(base)", "", "Example fixtures:"]
        for (name, size) in [("sample-1MiB.bin", Int64(1) << 20), ("sample-64MiB.bin", 64 << 20)] {
            let fixture = Fixture(name: name, size: size)
            lines.append("  \(ByteSize.format(size).padding(toLength: 6, withPad: " ", startingAt: 0)) \(server.url(for: fixture).absoluteString)")
            lines.append("         sha256 \(fixture.sha256Hex())")
        }
        // Hashing 1 GiB would delay startup by seconds; the server hashes it when asked.
        let large = Fixture(name: "sample-1GiB.bin", size: 1 << 30)
        lines.append("  1GiB   \(server.url(for: large).absoluteString)")
        lines.append("         sha256 at \(base)/fixtures/\(large.name).sha256?size=\(large.size)")
        lines += ["", "Uploads: curl -F file=@some.bin -F note=hi \(base)/upload (answers sizes and SHA-256s as JSON)"]
        lines += ["", HelpText.faultSyntax, "", "More at \(base)/ . Press Ctrl-C to stop.", ""]
        // Written straight to the file descriptor: print() buffers when stdout is a pipe, and
        // this process then waits for a signal, so `lab serve | tee` would show nothing.
        FileHandle.standardOutput.write(Data(lines.joined(separator: "\n").utf8))
    }
}

/// Blocks until SIGINT or SIGTERM. The default handlers are ignored so that the signal only
/// wakes this function, and a server can close its connections before the process exits.
enum Signals {
    static func waitForTermination() {
        let received = DispatchSemaphore(value: 0)
        let signalQueue = DispatchQueue(label: "lab.signals")
        let sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: signalQueue)
            source.setEventHandler { received.signal() }
            source.resume()
            return source
        }
        received.wait()
        sources.forEach { $0.cancel() }
    }
}
