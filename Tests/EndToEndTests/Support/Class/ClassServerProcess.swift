import Foundation
import TestFolders
import LabCatalogue
import LabClass
import LabReport
import LabVocabulary

/// `lab class serve` as a real child process, on a port the kernel picks, with its own data folder.
struct ClassServerProcess {
    let child: ChildProcess
    let data: URL
    let port: Int
    let classCode: String
    let teacherToken: String

    /// Starts the server and waits (up to 20 s) for the lines it prints.
    init(data: URL, listen: String = "127.0.0.1:0") throws {
        child = try ChildProcess("lab", ["class", "serve", "--listen", listen, "--data", data.path])
        self.data = data
        try child.start()
        let deadline = Date().addingTimeInterval(20)
        while true {
            let banner = child.stdoutSoFar
            if let code = banner.firstMatch(of: /Class code: ([A-Z0-9]+)\./)?.1,
               let teacher = banner.firstMatch(of: /http:\/\/[0-9.]+:(\d+)\/teacher\/([0-9a-f]+)/) {
                classCode = String(code)
                port = Int(teacher.1)!
                teacherToken = String(teacher.2)
                return
            }
            guard child.process.isRunning, Date() < deadline else {
                child.kill()
                throw ClassTestError("lab class serve did not start: \(banner.suffix(300))")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    var base: String { "http://127.0.0.1:\(port)" }
    var classURL: String { "\(base)/class/\(classCode)" }
    var submissions: String { classURL + "/submissions" }
    var teacherURL: String { "\(base)/teacher/\(teacherToken)" }
    var pid: Int32 { child.process.processIdentifier }

    /// What the server has written to stderr so far: a crash's backtrace, if any.
    var stderrSoFar: String { child.stderrSoFar }

    /// Ctrl-C, as a teacher stops it.
    @discardableResult
    func stop() -> ChildProcess.Finished {
        kill(pid, SIGINT)
        return child.wait(timeout: 10)
    }

    /// The store as the server left it, read the way `lab class export` reads it.
    func stored() throws -> (ids: Set<String>, grid: ClassGrid) {
        let store = try ClassStore(folder: data)
        return (try store.submissionIDs(), try store.gridNow())
    }
}

struct ClassTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// HTTP against the class server from client.py, a process of its own: the test process's
/// threads never wait inside a URLSession call, which on Linux can wait on a queue that another
/// test's download holds.
enum ClassHTTP {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("client.py")

    static func post(_ url: String, _ body: Data) throws -> (status: Int, body: String) {
        let file = TestFolders.root.appendingPathComponent("class-body-\(UUID().uuidString)")
        try body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try answer(["post", url, file.path])
    }

    static func get(_ url: String) throws -> (status: Int, body: String) {
        try answer(["get", url])
    }

    /// `students` at once, each sending `submissions` in turn; SIGKILL to `kill.pid` once
    /// `kill.after` are acknowledged.
    static func load(_ url: String, students: Int, submissions: Int, kill: (pid: Int32, after: Int)? = nil) throws
        -> (acknowledged: Set<String>, failures: [String]) {
        let template = TestFolders.root.appendingPathComponent("class-template-\(UUID().uuidString)")
        try ClassFixtures.json(ClassFixtures.submission(name: "template", key: ClassFixtures.key())).write(to: template)
        defer { try? FileManager.default.removeItem(at: template) }
        let finished = try run(["load", url, template.path, String(students), String(submissions)]
            + (kill.map { [String($0.pid), String($0.after)] } ?? []), timeout: 300)
        let result = try JSONSerialization.jsonObject(with: Data(finished.utf8)) as! [String: Any]
        return (Set(result["acknowledged"] as! [String]), result["failures"] as! [String])
    }

    private static func answer(_ arguments: [String]) throws -> (status: Int, body: String) {
        let result = try JSONSerialization.jsonObject(with: Data(try run(arguments, timeout: 60).utf8)) as! [String: Any]
        return (result["status"] as! Int, result["body"] as! String)
    }

    private static func run(_ arguments: [String], timeout: TimeInterval) throws -> String {
        let finished = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path] + arguments,
                                                   timeout: timeout)
        guard finished.status == 0 else { throw ClassTestError("client.py exit \(finished.status): \(finished.stderr.suffix(300))") }
        return finished.stdout
    }
}

/// Submissions as `lab` makes them.
enum ClassFixtures {
    static func key() -> String { UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() }

    /// One exercise's checks, each fixed or not as `fixed` says.
    static func submission(name: String, key: String, exercise: String = "03-outputstream", checks: [String]? = nil,
                           fixed: (String) -> Bool = { _ in true }, createdAt: Date = Date(),
                           id: String = UUID().uuidString.lowercased()) -> ClassSubmission {
        let lesson = Catalogue.lessons.first { $0.id.rawValue == exercise }!
        let records = (checks ?? lesson.everyCheck.map(\.id)).map { check in
            CheckRecord(exercise: exercise, check: check, status: fixed(check) ? .fixed : .stillThere, passed: fixed(check),
                        baseline: lesson.isBaseline(check),
                        detail: fixed(check) ? "fixed" : "exit 65: the server's error page saved as the file",
                        command: "swift run exercise-\(exercise)", seconds: 1, symptomSeen: !fixed(check), attempted: true,
                        codeSHA256: String(repeating: "0", count: 64), hintsShown: 0,
                        timestamp: ISO8601DateFormatter().string(from: createdAt))
        }
        return ClassSubmission(id: id, name: name, studentKey: key, checks: records, comparison: nil,
                               createdAt: ISO8601DateFormatter().string(from: createdAt))
    }

    static func json(_ submission: ClassSubmission) -> Data { try! JSONEncoder().encode(submission) }
}

/// headless Chromium, driven through its DevTools pipe by browser.py (next to this file).
enum Browser {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("browser.py")

    /// Each step's result, as JSON values.
    static func run(_ url: String, steps: [[String: Any]], scripts: Bool = true) throws -> [Any] {
        let stepsFile = TestFolders.root.appendingPathComponent("browser-steps-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: steps).write(to: stepsFile)
        defer { try? FileManager.default.removeItem(at: stepsFile) }
        let finished = try ChildProcess.runProgram(URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path] + (scripts ? [] : ["--no-scripts"]) + [url, stepsFile.path],
                                                   timeout: 90)
        guard finished.status == 0 else { throw ClassTestError("browser.py exit \(finished.status): \(finished.stderr)") }
        return try JSONSerialization.jsonObject(with: Data(finished.stdout.utf8)) as! [Any]
    }
}
