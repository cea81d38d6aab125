import Foundation
import LabVocabulary
import Testing

/// A chunked body has no Content-Length: its total is unknown until it ends. Every corrected
/// download that streams still saves the exact file, and its progress shows bytes so far and a
/// speed, never a percentage of a total it does not have. (Lesson 00, which holds the body in
/// memory, refuses an unknown length: `CompressedBodyTests`. Lesson 11 asks for ranges, and a
/// 206 names the total in its Content-Range whatever the body's coding: it knows it.)
struct UnknownLengthTests {
    static let downloads = LessonID.allCases.filter { $0.kind != .upload && $0 != .smallFile && !$0.fetchesInSegments }

    @Test(arguments: downloads)
    func aChunkedBodyIsSavedExactlyWithNoPercentage(lesson: LessonID) throws {
        let output = try scratchDirectory()
        let finished = try ChildProcess.run(lesson.executable, ["--size", "4MiB", "--faults", "chunked", "--output", output.appendingPathComponent("download.bin").path],
                                            timeout: 120)
        #expect(finished.status == 0, "\(finished.stdout.suffix(400))\(finished.stderr.suffix(400))")
        #expect(finished.stdout.contains("✔ verified: SHA-256 "))
        let progress = finished.stdout.split(separator: "\n").filter { $0.hasPrefix("progress ") }
        #expect(progress.allSatisfy { !$0.contains("%") }, "\(progress)")
        // Each reports a line at 1, 2 and 4 MiB. Lesson 09's app hears of the service's bytes in
        // batches, as an app hears of a background session's: a line at each doubling it
        // crosses, and the last at 4 MiB.
        let doublings = ["progress 1.0 MiB so far", "progress 2.0 MiB so far", "progress 4.0 MiB so far"]
        let said = progress.map { String($0.prefix(while: { $0 != "," })) }
        if lesson == .backgroundSession {
            #expect(said.last == doublings.last && !said.isEmpty && said.count <= doublings.count, "\(said)")
        } else {
            #expect(said == doublings)
        }
        #expect(progress.allSatisfy { $0.hasSuffix("/s (total not known)") })
    }
}
