import Foundation
import TestFolders
import Testing

/// `.ci/portability-check`, run as CI runs it: quiet on this package, and loud, with file:line,
/// on a Linux-only name planted outside the seam.
struct PortabilityCheckTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let script = packageRoot.appendingPathComponent(".ci/portability-check")

    @Test func thisPackagePasses() throws {
        let (status, output) = try Self.check(Self.packageRoot)
        #expect(status == 0, "\(output)")
        #expect(output.hasPrefix("portability-check: no Linux-only names outside Sources/LabPlatform/Linux.swift"))
    }

    @Test func aPlantedNameFailsWithItsPlace() throws {
        let root = TestFolders.root.appendingPathComponent("portability-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // Spelled in pieces, so that this file does not trip the check itself.
        let (glibc, proc, streamRaw, threadSelf) = ("Gl" + "ibc", "/pr" + "oc/", "SOCK_STREAM" + ".rawValue", "pthread_self" + "()")
        try Self.write("import \(glibc)\nlet fd = \"\(proc)self/fd\"\n", to: root, "Sources/LabPlatform/Linux.swift")
        try Self.write("import Foundation\n\nlet planted = Int32(\(streamRaw))\n", to: root, "Sources/LabKit/Planted.swift")
        try Self.write("let id = UInt(\(threadSelf))\n", to: root, "Tests/Planted.swift")
        // A module imported in a block that only Linux compiles; a whole file under it is a fill-in.
        let linuxOnly = "#if canImport(FoundationNetworking)"
        try Self.write("import Foundation\n\(linuxOnly)\nimport FoundationNetworking\nimport LabVocabulary\n#endif\n",
                       to: root, "Sources/LabKit/HiddenImport.swift")
        try Self.write("\(linuxOnly)\nimport Foundation\nimport LabVocabulary\n\nlet fillIn = 1\n#endif\n",
                       to: root, "Sources/LabKit/FillIn.swift")
        // What differs on Apple's systems wherever it is written: a tool macOS keeps in /usr/bin,
        // and the test bundle looked up where macOS's test runner does not put it.
        let (gzip, bundles) = ("\"/bin/" + "gzip\"", "Bundle." + "allBundles")
        try Self.write("let tool = URL(fileURLWithPath: \(gzip))\nlet shell = URL(fileURLWithPath: \"/bin/sh\")\n",
                       to: root, "Tests/Gzip.swift")
        try Self.write("import Foundation\nlet tests = \(bundles).first\n", to: root, "Tests/Products.swift")
        try Self.write("import Foundation\nlet tests = \(bundles).first\n", to: root, "Sources/LabPlatform/Darwin.swift")
        // Apple's deprecated initializers: a subclass of a session class, and a bare init(); a
        // subclass in a block only Linux compiles is a fill-in.
        let (task, configuration) = (": URLSession" + "DownloadTask, @unchecked Sendable {", "URLSession" + "Configuration()")
        try Self.write("import Foundation\nfinal class Planted\(task)}\nlet made = \(configuration)\nlet lab = LabURLSession" + "()\n",
                       to: root, "Sources/LabKit/Subclass.swift")
        try Self.write("import Foundation\n\(linuxOnly)\nfinal class FillIn\(task)}\n#else\nlet other = 1\n#endif\n",
                       to: root, "Sources/LabKit/LinuxSubclass.swift")
        let (status, output) = try Self.check(root)
        #expect(status == 1)
        #expect(lines(output).contains("Sources/LabKit/Subclass.swift:2: a subclass of Foundation's URLSession classes, whose "
                                       + "initializers Apple deprecates: build it by composition"), "\(output)")
        #expect(lines(output).contains("Sources/LabKit/Subclass.swift:3: URLSession's deprecated init(): use its class methods "
                                       + "(URLSession(configuration:), .default)"), "\(output)")
        #expect(!output.contains("Subclass.swift:4") && !output.contains("LinuxSubclass.swift"), "\(output)")
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.contains("Tests/Gzip.swift:1: /bin/gzip, which macOS keeps in /usr/bin: find it on PATH"), "\(output)")
        #expect(!output.contains("/bin/sh,"), "macOS has /bin/sh: \(output)")
        #expect(lines.contains("Tests/Products.swift:2: \(bundles) outside Sources/LabPlatform: use Platform.productsFolder"),
                "\(output)")
        #expect(!output.contains("Darwin.swift"), "the seam may look for the bundle: \(output)")
        #expect(lines.contains("Sources/LabKit/Planted.swift:3: Linux-only \(streamRaw) outside Sources/LabPlatform/Linux.swift"),
                "\(output)")
        #expect(lines.contains("Tests/Planted.swift:1: Linux-only pthread_self() as an integer outside Sources/LabPlatform/Linux.swift"),
                "\(output)")
        #expect(lines.contains("Sources/LabKit/HiddenImport.swift:4: import LabVocabulary only where FoundationNetworking exists (Linux): move it after #endif"),
                "\(output)")
        #expect(!output.contains("FillIn.swift"), "\(output)")
        #expect(!output.contains("LabPlatform/Linux.swift:"), "the seam's own Linux file may say anything: \(output)")
    }

    /// What decides differently on a Mac, planted in the lab's code: a system tool whose options
    /// differ or that macOS lacks, an XDG_ variable, Foundation's temporary folder. Each fails with
    /// its place; a comment may name them, and the seam's files may use them.
    @Test func aMacDifferencePlantedFailsWithItsPlace() throws {
        let root = TestFolders.root.appendingPathComponent("portability-mac-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        // Spelled in pieces, so that this file does not trip the check itself.
        let (dd, conversion, temporary, nsTemporary) = ("\"d" + "d\"", "co" + "nv=fdatasync", "temporary" + "Directory", "NSTemporary" + "Directory()")
        let (xdg, timeout, coreCount) = ("XDG" + "_CACHE_HOME", "time" + "out", "npr" + "oc")
        let gnu = (stat: "st" + "at -c", readlink: "readlink" + " -f", sed: "se" + "d -i")
        let planted = [
            "let tool = which(\(dd))",
            "let operands = [\"of=zeros\", \"\(conversion)\"]",
            "let size = shell(\"\(gnu.stat) %s file\"); let real = shell(\"\(gnu.readlink) x\"); let edit = shell(\"\(gnu.sed) s/a/b/ f\")",
            "let limited = [\"\(timeout)\", \"30\", \"lesson\"]",
            "let cores = shell(\"\(coreCount)\")",
            "setenv(\"\(xdg)\", folder, 1)",
            "let scratch = FileManager.default.\(temporary)",
            "let old = \(nsTemporary)",
            "// a comment may say \(temporary), \(dd) or \(xdg)",
        ]
        try Self.write("import Foundation\n" + planted.joined(separator: "\n") + "\n", to: root, "Sources/LabKit/Planted.swift")
        // The seam's own files, and a playground (an app's code, whose temporary folder is its own).
        try Self.write("import Foundation\nlet mine = FileManager.default.\(temporary)\n", to: root, "Sources/LabKit/Downloading/LabFolders.swift")
        try Self.write("import Foundation\nsetenv(\"\(xdg)\", folder, 1)\n", to: root, "Sources/LabKit/Downloading/FoundationSeam.swift")
        try Self.write("import Foundation\nlet tmp = FileManager.default.\(temporary)\n", to: root, "Playgrounds/P.playground/Contents.swift")
        let (status, output) = try Self.check(root)
        #expect(status == 1)
        let found = lines(output)
        // Each line's own words, without the names themselves, which would trip the check here.
        for (line, words) in [(2, "whose options differ on a Mac"), (3, "whose options differ on a Mac"),
                              (4, "Linux-only a GNU-only command flag outside Sources/LabPlatform/Linux.swift"),
                              (5, "which macOS lacks"), (6, "which macOS lacks"),
                              (7, "variable, which only Foundation on Linux reads"),
                              (8, "Foundation's temporary folder, which on a Mac is not TMPDIR: use LabFolders"),
                              (9, "Foundation's temporary folder, which on a Mac is not TMPDIR: use LabFolders")] {
            #expect(found.contains { $0.hasPrefix("Sources/LabKit/Planted.swift:\(line): ") && $0.contains(words) }, "line \(line): \(output)")
        }
        #expect(!output.contains("Planted.swift:10"), "a comment may name them: \(output)")
        #expect(!output.contains("LabFolders.swift") && !output.contains("FoundationSeam.swift") && !output.contains("Playgrounds/"), "\(output)")
    }

    private func lines(_ output: String) -> [String] { output.split(separator: "\n").map(String.init) }

    static func write(_ text: String, to root: URL, _ path: String) throws {
        let file = root.appendingPathComponent(path)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: file, atomically: true, encoding: .utf8)
    }

    /// The exit status, and stdout and stderr together.
    static func check(_ root: URL) throws -> (Int32, String) { try run(script, [root.path]) }

    /// One of the `.ci` scripts, with `arguments`: its exit status, and stdout and stderr together.
    static func run(_ script: URL, _ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        // A few lines at most: read to the end, then reap.
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
