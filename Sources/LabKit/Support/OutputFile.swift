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
