import Foundation
import LabKit

/// Where a lesson's run writes: its file or folder, and Foundation's stores beside them.
extension LessonProcess {
    /// With `--output`, whatever is there stays, so a partial file can be resumed. Without it, the
    /// lesson starts from nothing, in a folder of this run's own (`LabFolders`).
    func prepareOutput() throws -> URL {
        let file: URL
        if let output = options.output {
            file = URL(fileURLWithPath: output)
        } else {
            let folder = try LabFolders.forThisRun(lesson.command)
            file = lesson.savesIntoFolder ? folder : folder.appendingPathComponent("\(lesson.command).bin")
        }
        if lesson.savesIntoFolder { return try prepareFolder(file) }
        let directory = file.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw DownloadError.localIO(path: directory.path, reason: "cannot create the directory")
        }
        // Only a regular file can be resumed and read back to verify (think of /dev/zero), and a
        // link is not followed to whatever it points at.
        do {
            try OutputFile.checkReplaceable(file)
        } catch let error as OutputFileError {
            throw DownloadError.localIO(path: file.path, reason: error.reason)
        }
        return file
    }

    /// Where this run's URL cache and cookies go: an app's container keeps them in its Library,
    /// as iOS does (the cache in Library/Caches, which a purge empties); any other run gets a
    /// folder of its own, in the lab's folder or, when that cannot be made (an unusable
    /// TMPDIR), beside its output, removed when the process ends.
    func foundationStores(for file: URL) throws -> FoundationStores {
        if lesson.id.kind == .downloadIntoContainer {
            return FoundationStores(cache: file.appendingPathComponent(AppContainer.caches, isDirectory: true),
                                    cookies: file.appendingPathComponent(AppContainer.cookies, isDirectory: true))
        }
        let name = "foundation-\(lesson.command)-\(getpid())"
        let folder: URL
        if let own = try? LabFolders.forThisRun("foundation-" + lesson.command) {
            folder = own
        } else {
            folder = file.deletingLastPathComponent().appendingPathComponent("." + name, isDirectory: true)
            guard mkdir(folder.path, 0o700) == 0 || errno == EEXIST, OutputFile.isOwnFolder(folder) else {
                throw DownloadError.localIO(path: folder.path, reason: "cannot make a folder for Foundation's cache and cookies")
            }
        }
        LabFolders.removeAtExit(folder)
        return FoundationStores(cache: folder.appendingPathComponent("cache", isDirectory: true),
                                cookies: folder.appendingPathComponent("cookies", isDirectory: true))
    }

    /// The folder a lesson saves into (its stand-in for an app's Documents); made if missing.
    private func prepareFolder(_ folder: URL) throws -> URL {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw DownloadError.localIO(path: folder.path, reason: "this lesson saves into a folder, and this is a file")
        }
        // Every folder of an app's container is the lab's own: what a lesson writes into one that
        // is a link would land wherever the link points, so none on the way may be one. (Lesson
        // 05's folder is the person's to name, a link included.)
        let own = lesson.id.kind == .downloadIntoContainer
            ? [folder] + AppContainer.folders.map { folder.appendingPathComponent($0, isDirectory: true) } : []
        for path in own {
            var status = stat()
            guard lstat(path.path, &status) == 0 else { continue }
            switch status.st_mode & S_IFMT {
            case S_IFDIR: continue
            case S_IFLNK: throw DownloadError.localIO(path: path.path, reason: "it is a symbolic link; this lesson writes only into folders of its own")
            default: throw DownloadError.localIO(path: path.path, reason: "it is not a folder; this lesson writes only into folders of its own")
            }
        }
        // An app's container starts with its Documents, Library/Caches and tmp (`LessonRun.containerURL(for:)`).
        let made = lesson.id.kind == .downloadIntoContainer
            ? [AppContainer.documents, AppContainer.caches, AppContainer.tmp].map { folder.appendingPathComponent($0, isDirectory: true) } : [folder]
        do {
            for folder in made { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        } catch {
            throw DownloadError.localIO(path: folder.path, reason: "cannot create the folder")
        }
        return folder
    }
}
