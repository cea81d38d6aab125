import Foundation
import TestFolders
import LabKit
import LabVocabulary
import Testing

/// `FileHandle(forWritingTo:at:)`, through which every resuming lesson opens its file: the bytes
/// before `offset` stay, the bytes after it go, and writing continues at `offset`.
struct WritingAtOffsetTests {
    let file = TestFolders.root.appendingPathComponent("at-offset-\(UUID().uuidString).bin")

    private func write(_ bytes: String, at offset: Int64, over existing: String?) throws -> String {
        defer { try? FileManager.default.removeItem(at: file) }
        if let existing { try Data(existing.utf8).write(to: file) }
        let handle = try FileHandle(forWritingTo: file, at: offset)
        try handle.write(contentsOf: Data(bytes.utf8))
        try handle.close()
        return String(decoding: try Data(contentsOf: file), as: UTF8.self)
    }

    @Test func aNewFileIsCreated() throws {
        #expect(try write("abc", at: 0, over: nil) == "abc")
    }

    @Test func aFileThatEndsAtTheOffsetIsContinued() throws {
        #expect(try write("def", at: 3, over: "abc") == "abcdef")
    }

    @Test func whatLiesBeyondTheOffsetIsCutOff() throws {
        #expect(try write("XY", at: 3, over: "abcdefgh") == "abcXY")
    }

    /// Writing starts at `offset` even in a file that ends before it, as `truncate(atOffset:)`
    /// would have placed it: the gap reads as zeros.
    @Test func aShorterFileIsWrittenFromTheOffset() throws {
        #expect(try write("XY", at: 5, over: "abc") == "abc\0\0XY")
    }

    /// A 200 after a partial file: the whole file starts again from byte 0.
    @Test func offsetZeroReplacesTheFile() throws {
        #expect(try write("new", at: 0, over: "an older, longer file") == "new")
    }

    /// A link planted at the path, to a file or to nothing yet, is never written through: the
    /// open fails in the same call, and what the link points to stays as it was.
    @Test(arguments: [true, false])
    func aLinkInPlaceOfTheFileIsNotWrittenThrough(targetExists: Bool) throws {
        let target = TestFolders.root.appendingPathComponent("at-offset-target-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: target)
        }
        if targetExists { try Data("victim".utf8).write(to: target) }
        try FileManager.default.createSymbolicLink(at: file, withDestinationURL: target)
        let partial = PartialFile(url: URL(string: "http://127.0.0.1/x")!, file: file, log: { _ in }, reportProgress: { _, _ in })
        #expect {
            _ = try partial.openForWriting(at: 0)
        } throws: { error in
            "\(error)".contains("cannot open it for writing: a symbolic link is in its place, and no file is written through one")
        }
        if targetExists {
            #expect(String(decoding: try Data(contentsOf: target), as: UTF8.self) == "victim")
        } else {
            #expect(!FileManager.default.fileExists(atPath: target.path))
        }
    }

    /// A file with another name (a hard link, to a file outside the lab's folders, say) is not
    /// written through either: not a byte, not a truncation.
    @Test func aFileWithAnotherNameIsNotWrittenThrough() throws {
        let other = TestFolders.root.appendingPathComponent("at-offset-other-\(UUID().uuidString)")
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: other)
        }
        try Data("victim, longer than the offset".utf8).write(to: other)
        try FileManager.default.linkItem(at: other, to: file)
        let partial = PartialFile(url: URL(string: "http://127.0.0.1/x")!, file: file, log: { _ in }, reportProgress: { _, _ in })
        #expect {
            _ = try partial.openForWriting(at: 3)
        } throws: { error in
            "\(error)".contains("cannot open it for writing: it has another name (a hard link), and no file is written through one")
        }
        #expect(String(decoding: try Data(contentsOf: other), as: UTF8.self) == "victim, longer than the offset")
    }
}
