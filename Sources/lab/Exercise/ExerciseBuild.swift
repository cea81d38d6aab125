import Foundation
import LabHarness
import LabKit
import LabPlatform
import LabVocabulary

/// Builds one product of the package with `swift build`, in the configuration `lab` itself was
/// built in, and runs it from where `swift build --show-bin-path` says that build put it: not
/// from beside `lab`, which Xcode builds into DerivedData. Of the build log, only the compiler's
/// first error is kept (`firstDiagnostic`): a student reads that, not SwiftPM's lines.
///
/// Like any `swift build`, it waits while another `swift` command holds the package's lock.
/// `swift test` holds it until its tests end, so a check that a test starts builds with
/// `--ignore-lock`.
enum ExerciseBuild {
    static func build(product: String, in root: URL, ignoringLock: Bool) throws -> URL {
        var options = MachineFacts.buildConfiguration == .release ? ["-c", "release"] : []
        if ignoringLock { options.append("--ignore-lock") }
        // One `lab` build at a time: two at once in one .build folder would trip over each other.
        let ownLock = try BuildLock(root.appendingPathComponent(".build/lab-exercises/build.lock"))
        defer { ownLock.release() }
        var built = try swift(["build", "--product", product] + options, in: root)
        // Package.swift lists an exercise once its folder exists, and SwiftPM reuses a manifest's
        // evaluation while Package.swift's text is unchanged: an exercise `lab exercise reset` has
        // just made is unknown to it until the manifest is read again.
        if built.status != 0, (built.stdout + built.stderr).contains("no product named '\(product)'") {
            built = try swift(["build", "--manifest-cache", "none", "--product", product] + options, in: root)
        }
        guard !built.timedOut else { throw ExerciseError.failure("`swift build --product \(product)` was still running after an hour: stopped") }
        guard built.status == 0 else {
            guard let diagnostic = firstDiagnostic(in: built.stdout + "\n" + built.stderr, root: root) else {
                throw ExerciseError.failure("`swift build --product \(product)` failed (exit \(built.status))")
            }
            throw ExerciseError.doesNotCompile(diagnostic)
        }
        let folder = try swift(["build", "--show-bin-path"] + options, in: root)
        let path = folder.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard folder.status == 0, path.hasPrefix("/") else {
            throw ExerciseError.failure("`swift build --show-bin-path` did not name the products folder (exit \(folder.status))")
        }
        return URL(fileURLWithPath: path, isDirectory: true).appendingPathComponent(product)
    }

    /// `swift` with `arguments`, run in `root`. A first build of the package takes minutes; an
    /// hour is a build that hangs.
    private static func swift(_ arguments: [String], in root: URL) throws -> ChildCommand.Finished {
        do {
            return try ChildCommand.run(URL(fileURLWithPath: "/usr/bin/env"), ["swift"] + arguments, in: root, timeout: .seconds(3600))
        } catch {
            throw ExerciseError.failure("cannot run `swift \(arguments[0])`: \(error.localizedDescription)")
        }
    }

    /// The compiler's first error, whole: its line, the excerpt of code under it and its notes,
    /// with the package's folder left out of the paths and SwiftPM's own lines dropped. Its
    /// summary is the error's line ("Sources/Exercises/02-filehandle/Article.swift:42:9: error:
    /// cannot find 'x' in scope"), with the header's Mutex named where a Mutex is the fix.
    static func firstDiagnostic(in log: String, root: URL) -> CompilerDiagnostic? {
        let prefix = root.standardizedFileURL.path + "/"
        func relative(_ line: Substring) -> String {
            let text = String(line).trimmingCharacters(in: .whitespaces)
            return text.hasPrefix(prefix) ? String(text.dropFirst(prefix.count)) : String(line)
        }
        let lines = log.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.firstIndex(where: { $0.contains(": error: ") && !$0.hasPrefix("error: ") }) else { return nil }
        var block = [relative(lines[first])]
        for line in lines[(first + 1)...] {
            // The excerpt ("42 |   x = 1", "   |   `- error: …") and the notes belong to it; the
            // next error or warning, and SwiftPM's progress, do not.
            let isExcerpt = line.range(of: #"^\s*[0-9]*\s*\|"#, options: .regularExpression) != nil
            guard isExcerpt || line.contains(": note: ") else { break }
            block.append(isExcerpt ? String(line) : relative(line))
        }
        var summary = block[0]
        if mutexWords.contains(where: summary.contains) {
            summary += " (Swift 6's data-race checking: the header of Article.swift shows the Mutex the lessons use for state a callback changes)"
        }
        return CompilerDiagnostic(summary: summary, text: block.joined(separator: "\n"))
    }

    /// The errors a Mutex fixes: a plain `var` that a callback, run on another thread, changes
    /// or reads ("mutation of captured var 'data' in concurrently-executing code"). Others, such
    /// as a non-Sendable value sent into a task, want another fix, and get no advice.
    private static let mutexWords = ["mutation of captured var", "reference to captured var"]
}

/// The compiler's first error: one line to report, and the whole of it to read.
struct CompilerDiagnostic {
    let summary: String
    let text: String
}

/// An exclusive `flock` on a file of `lab`'s own, released on `release()` or when the process ends.
struct BuildLock {
    private let descriptor: Int32

    init(_ file: URL) throws {
        do {
            try OutputFile.makeOwnFolder(file.deletingLastPathComponent())
        } catch {
            throw ExerciseError.failure("cannot lock \(file.path): \(error)")
        }
        descriptor = open(file.path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0, flock(descriptor, LOCK_EX) == 0 else {
            throw ExerciseError.failure("cannot lock \(file.path): \(String(cString: strerror(errno)))")
        }
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
