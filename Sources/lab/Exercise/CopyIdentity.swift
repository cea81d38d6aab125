import Foundation

/// Which copy of the package this is: the device and inode of its folder. A copy (`cp -R`, a zip
/// unpacked, a folder handed out with its `.build`) gets a new one, so what `lab` keeps for a
/// student, the class key and the exercises' progress, is not shared by the copies of a folder
/// a teacher built once: each copy makes its own on its first run.
enum CopyIdentity {
    static func of(_ folder: URL) -> String {
        var facts = stat()
        guard stat(folder.path, &facts) == 0 else { return "unknown" }
        return "\(facts.st_dev):\(facts.st_ino)"
    }
}
