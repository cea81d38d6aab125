import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabHarness
import LabKit
import LabVocabulary

/// A class server's address as the teacher's `lab class serve` prints it:
/// `http://HOST:PORT/class/CODE`. Submissions go to its `/submissions`.
struct ClassAddress: CustomStringConvertible {
    let url: URL

    /// The address in `text`, or a ValidationError that says what an address looks like.
    static func parse(_ text: String, option: String) throws -> ClassAddress {
        guard let address = ClassAddress(text) else {
            throw ValidationError("\(option): expected the class's address, http://HOST:PORT/class/CODE, got \"\(text)\"")
        }
        return address
    }

    private init?(_ argument: String) {
        var text = argument
        while text.hasSuffix("/") { text.removeLast() }
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
              url.host?.isEmpty == false, url.query == nil, url.fragment == nil
        else { return nil }
        let parts = url.path.split(separator: "/")
        guard parts.count == 2, parts[0] == "class", !parts[1].isEmpty else { return nil }
        self.url = url
    }

    var description: String { url.absoluteString }
    var submissions: URL { url.appendingPathComponent("submissions") }
}

/// `--submit URL --name NAME`, for `lab exercise check` and `lab compare`.
struct ClassSubmitOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Also send the results to a class server: the address the teacher gives, http://HOST:PORT/class/CODE.",
                               valueName: "URL"))
    var submit: String?

    @Option(help: "Your name on the class's page, with --submit (at most \(ClassSubmission.longestName) characters).")
    var name: String?

    func validate() throws {
        if (submit == nil) != (name == nil) { throw ValidationError("--submit and --name go together") }
        if let submit { _ = try ClassAddress.parse(submit, option: "--submit") }
        if let name, let problem = ClassSubmission.problem(withName: name) { throw ValidationError("--name: \(problem)") }
    }

    /// Sends what the run found, after it has been shown. Whatever happens, the run's output and
    /// exit status stay what they were: a failure is one line, and the submission waits in the outbox.
    func send(checks: [CheckRecord] = [], comparison: ComparisonResults? = nil) {
        guard let submit, let name, let address = try? ClassAddress.parse(submit, option: "--submit") else { return }
        let outbox = ClassOutbox.here()
        let submission = ClassSubmission(id: UUID().uuidString.lowercased(), name: name, studentKey: outbox.studentKey(),
                                         checks: checks, comparison: comparison,
                                         createdAt: ISO8601DateFormatter().string(from: Date()))
        do {
            let answer = try ClassOutbox.send(submission, to: address)
            Console.error("submitted to the class: \(answer)")
        } catch {
            let kept = outbox.keep(submission)
            Console.error("not submitted: \(error)." + (kept.map { " Kept in \($0); send it later with "
                + "`swift run \(ShellWord.line(["lab", "class", "submit", "\(address)", "--name", name]))`" } ?? ""))
        }
    }
}

/// Submissions that could not be sent, in `.build/class-outbox/` of the package, and the
/// student key that makes this copy of the lab the owner of its name on a class server.
struct ClassOutbox {
    let folder: URL
    private let keyFile: URL
    /// This copy of the package (`CopyIdentity`): the key file names the copy that made it.
    private let copy: String

    /// The package's `.build` when run inside it, else the current folder's.
    static func here() -> ClassOutbox {
        let root = (try? ExerciseWorkspace.find().root) ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let build = root.appendingPathComponent(".build")
        return ClassOutbox(folder: build.appendingPathComponent("class-outbox"), keyFile: build.appendingPathComponent("class-student-key"),
                           copy: CopyIdentity.of(root))
    }

    /// The key, made on first use and readable by its owner only: its first line, and the copy
    /// that made it on the second. A key another copy made (a folder handed out with its .build)
    /// is replaced, so no two students share one; a key from before the copy was written down
    /// is kept, and given this copy's name.
    func studentKey() -> String {
        let lines = OutputFile.readBounded(keyFile, limit: 4096)
            .map { String(decoding: $0, as: UTF8.self).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
        if let key = lines.first, (16...128).contains(key.count) {
            if lines.count > 1, lines[1] == copy { return key }
            if lines.count == 1 { return save(key) }
        }
        return save((UUID().uuidString + UUID().uuidString).replacingOccurrences(of: "-", with: "").lowercased())
    }

    private func save(_ key: String) -> String {
        try? FileManager.default.createDirectory(at: keyFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard !FileManager.default.fileExists(atPath: keyFile.path) || OutputFile.isSoleRegularFile(keyFile) else { return key }
        // Unsaved, the key still serves this submission; the next one makes another, and the
        // server then refuses it as someone else's, which its line says.
        _ = FileManager.default.createFile(atPath: keyFile.path, contents: Data((key + "\n" + copy + "\n").utf8),
                                           attributes: [.posixPermissions: 0o600])
        return key
    }

    /// Writes the submission into the outbox; returns its path, or nil if it cannot be written.
    func keep(_ submission: ClassSubmission) -> String? {
        let file = folder.appendingPathComponent("\(submission.id).json")
        do {
            try OutputFile.makeOwnFolder(folder)
            try JSONEncoder().encode(submission).write(to: file, options: .atomic)
            return file.path
        } catch {
            return nil
        }
    }

    /// Every waiting submission, oldest first, and the names of the entries that are not one (a
    /// folder, a FIFO, a file too large or not a submission), which are left alone.
    func waiting() -> (submissions: [(file: URL, submission: ClassSubmission)], strays: [String]) {
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        var submissions: [(file: URL, submission: ClassSubmission)] = []
        var strays: [String] = []
        for file in files.sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) {
            if let submission = OutputFile.readBounded(file, limit: ClassSubmission.largestFile)
                .flatMap({ try? JSONDecoder().decode(ClassSubmission.self, from: $0) }) {
                submissions.append((file, submission))
            } else {
                strays.append(file.lastPathComponent)
            }
        }
        return (submissions.sorted { $0.submission.createdAt < $1.submission.createdAt }, strays)
    }

    /// Posts a submission; returns the server's one-line answer, or throws one line.
    static func send(_ submission: ClassSubmission, to address: ClassAddress) throws(SubmitFailure) -> String {
        var request = URLRequest(url: address.submissions, timeoutInterval: 15)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        do {
            request.httpBody = try JSONEncoder().encode(submission)
        } catch {
            throw SubmitFailure("cannot encode the results: \(error)")
        }
        let answer: (response: URLResponse, data: Data)
        do {
            answer = try URLConnection.sendSynchronousRequest(request)
        } catch {
            throw SubmitFailure("\(address.url.host ?? "the server") does not answer (\(error.localizedDescription))")
        }
        let status = (answer.response as? HTTPURLResponse)?.statusCode ?? 0
        let line = String(decoding: answer.data.prefix(300), as: UTF8.self)
            .split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        guard status == 200 else { throw SubmitFailure("the class server answered HTTP \(status)" + (line.isEmpty ? "" : ": \(line)")) }
        return line
    }
}

struct SubmitFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
