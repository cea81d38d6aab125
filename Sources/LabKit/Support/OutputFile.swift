import Foundation
import LabVocabulary

/// A file the person names for the lab to write (`lab report -o`, the files of `lab compare -o`,
/// a lesson's `--output`). The lab writes such a file by renaming a new one over it, which would
/// replace whatever is at the path: a link, a FIFO, a device such as /dev/null. So only a new
/// path or a regular file is accepted.
public enum OutputFile {
    /// Throws `OutputFileError` when something other than a regular file is at `url`. The
    /// path itself is looked at, not what a symbolic link there points to.
    public static func checkReplaceable(_ url: URL) throws {
        var status = stat()
        guard lstat(url.path, &status) == 0 else {
            if errno == ENOENT { return }
            throw OutputFileError(path: url.path, reason: String(cString: strerror(errno)).lowercased())
        }
        let kind: String
        switch status.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR: kind = "a folder"
        case S_IFLNK: kind = "a symbolic link"
        case S_IFIFO: kind = "a FIFO"
        case S_IFCHR, S_IFBLK: kind = "a device"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        throw OutputFileError(path: url.path, reason: "it is \(kind); only a new path or a regular file is written")
    }
}

extension OutputFile {
    /// Whether a regular file is at `url`, the path itself (a link is not followed): the only
    /// kind the lab reads back or deletes among the files it keeps beside the user's (a sidecar,
    /// the exercises' progress). A FIFO would block a read, /dev/zero never end it.
    public static func isRegularFile(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
    }
}

/// A path the lab refuses to write. Exit status 73 (EX_CANTCREAT) for the `lab` commands.
public struct OutputFileError: Error, CustomStringConvertible, CommandExitStatus {
    public let path: String
    public let reason: String
    public var description: String { "\(path): \(reason)" }
    public var exitStatus: Int32 { 73 }
}

/// An error that ends a `lab` command with its own status instead of 1.
public protocol CommandExitStatus: Error {
    var exitStatus: Int32 { get }
}

extension OutputFile {
    /// Whether `url` is a regular file with no other name: no link to it, symbolic or hard. A
    /// file the lab writes in place in its own folders must be one, or a write would reach a file
    /// outside them.
    public static func isSoleRegularFile(_ url: URL) -> Bool {
        var status = stat()
        return lstat(url.path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_nlink == 1
    }

    /// The bytes of the regular file at `url` (a link is not followed), or nil when there is none
    /// or it holds more than `limit` bytes: the lab's folders are anyone's to plant files in, and
    /// nothing it reads back from them may fill memory or block. The read itself stops past the
    /// limit, so a file that grows meanwhile is no exception.
    public static func readBounded(_ url: URL, limit: Int = 1 << 20) -> Data? {
        let descriptor = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
              let data = try? handle.read(upToCount: limit + 1) ?? Data(), data.count <= limit
        else { return nil }
        return data
    }
}

extension OutputFile {
    /// Whether `folder` is a folder itself, not a link to one.
    public static func isOwnFolder(_ folder: URL) -> Bool {
        var status = stat()
        return lstat(folder.path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
    }

    /// Makes `folder`, one of the lab's own (`.build/lab-exercises`, `.build/class-outbox`), or
    /// checks the one that is there: it must be a folder itself, not a link to one, or what the
    /// lab writes in it would land wherever the link points. Its parent is made as usual.
    public static func makeOwnFolder(_ folder: URL) throws {
        try? FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        if mkdir(folder.path, 0o755) != 0, errno != EEXIST {
            throw OutputFileError(path: folder.path, reason: "cannot create the folder: " + String(cString: strerror(errno)).lowercased())
        }
        var status = stat()
        guard lstat(folder.path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw OutputFileError(path: folder.path, reason: "it is not a folder of the lab's own (a link, or a file): nothing is written through it")
        }
    }
}
