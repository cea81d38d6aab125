import Foundation
import LabKit
import LabVocabulary
import Testing

/// Without `--output`, each run of a lesson writes in a folder of its own, inside a folder of
/// the user's own: two runs of the same lesson at once never share a file.
struct PrivateOutputTests {
    @Test func twoRunsAtOnceWriteToTwoPrivateFolders() throws {
        let runs = try (0..<2).map { _ in
            let child = try ChildProcess("lesson-03-outputstream", ["--size", "8MiB", "--json", "--quiet"])
            try child.start()
            return child
        }
        let records = try runs.map { child in
            let finished = child.wait(timeout: 120)
            #expect(finished.status == 0, "\(finished.stderr)")
            return try JSONDecoder().decode(LessonResult.self, from: Data(finished.stdout.utf8))
        }
        let folders = records.map { URL(fileURLWithPath: $0.output).deletingLastPathComponent() }
        #expect(folders[0] != folders[1])
        for folder in folders {
            #expect(folder.deletingLastPathComponent() == LabFolders.mine.standardizedFileURL
                    || folder.deletingLastPathComponent().path == LabFolders.mine.path, "\(folder.path)")
        }
        var facts = stat()
        #expect(lstat(LabFolders.mine.path, &facts) == 0)
        #expect(facts.st_mode & 0o777 == 0o700 && facts.st_uid == getuid())
    }
}
