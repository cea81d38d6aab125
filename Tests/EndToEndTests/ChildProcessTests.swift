import Foundation
import LabPlatform
import LabVocabulary
import Testing

/// The test support's own contract: killing a child kills what it started, so a hung `lab` leaves
/// no build or checked program running beside the rest of the suite.
struct ChildProcessTests {
    @Test func killTakesTheGrandchildrenWithIt() throws {
        let child = try ChildProcess(program: URL(fileURLWithPath: "/bin/sh"), ["-c", "sleep 300 & echo $!; wait"])
        try child.start()
        let deadline = Date().addingTimeInterval(10)
        while child.stdoutSoFar.isEmpty && Date() < deadline { usleep(20_000) }
        let grandchild = try #require(Int32(child.stdoutSoFar.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(ChildProcess.descendants(of: child.process.processIdentifier).contains(grandchild))

        child.kill()
        // Gone, or a zombie waiting to be reaped by whoever adopted it: either way not running.
        let stillRunning = { Platform.isRunning(grandchild) }
        let gone = Date().addingTimeInterval(5)
        while stillRunning() && Date() < gone { usleep(20_000) }
        #expect(!stillRunning(), "sleep \(grandchild) outlived its parent's kill")
        // While a grandchild lives, waitUntilExit() on the killed child does not return here
        // (seen: it sat out the whole 300 s sleep), so a test that killed a hung `lab` would hang.
        kill(grandchild, SIGKILL)
        child.process.waitUntilExit()
    }
}
