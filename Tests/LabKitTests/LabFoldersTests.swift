import Foundation
import LabKit
import Testing

/// Where the lab's folders go is decided from the environment alone, the same on every system:
/// Foundation's `temporaryDirectory` on a Mac prefers the user's folder to `TMPDIR`.
struct LabFoldersTests {
    @Test func theTemporaryFolderIsTheOneTheEnvironmentGives() {
        #expect(LabFolders.systemTemporary(in: ["TMPDIR": "/work/t"]).path == "/work/t")
        #expect(LabFolders.systemTemporary(in: ["TMPDIR": "/work/t/"]).path == "/work/t")
        #expect(LabFolders.systemTemporary(in: ["TMPDIR": "/work/a/../t"]).path == "/work/t")
        // The run's own folder, which a lesson keeps when it gives the app's code another TMPDIR.
        #expect(LabFolders.systemTemporary(in: ["TMPDIR": "/work/app-tmp", LabFolders.runsTemporaryFolder: "/work/t"]).path == "/work/t")
        // Empty or missing means none: /tmp, never the root or the working folder.
        #expect(LabFolders.systemTemporary(in: ["TMPDIR": ""]).path == "/tmp")
        #expect(LabFolders.systemTemporary(in: [LabFolders.runsTemporaryFolder: "", "TMPDIR": "/work/t"]).path == "/work/t")
        #expect(LabFolders.systemTemporary(in: [:]).path == "/tmp")
    }

    /// This process's folder follows its own TMPDIR, which the tests set to their folder.
    @Test func theLabsFolderIsInThisProcesssTMPDIR() {
        let given = LabFolders.systemTemporary(in: ProcessInfo.processInfo.environment)
        #expect(LabFolders.mine.deletingLastPathComponent().path == given.path)
        #expect(LabFolders.mine.lastPathComponent == "download-lab-\(getuid())")
    }
}
