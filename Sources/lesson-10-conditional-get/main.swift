/// Lesson 10: don't download it twice. The app downloads a file, is launched again, and must
/// show the server's current version, fetching it again only when it has changed.
///
/// Follows "NSURLConnection下载文件并监测下载进度" (a HEAD for the size, and "already downloaded"
/// when the file on disk is as big) and the "Controlling Response Caching" part of
/// "IOS如何根据URL下载内容" (the default cache policy, and a `willCacheResponse` that keeps
/// everything and adds a date). The file goes to the Caches folder, as several articles put it.
///
/// The harness launches the app twice in one run: each launch makes a new strategy object, which
/// finds only what the first left in the app's container (`run.containerURL(for:)`). By default
/// the file changes on the server between the launches (`--faults ok,change`); `--faults ""`
/// keeps it, and `--purge-caches` empties Library/Caches between them, as iOS may.
///
/// Article.swift keeps the articles' logic, defects included; Corrected.swift fixes them.
/// Read Lessons/10-conditional-get.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit

Lesson(.conditionalGet).run { run in
    switch run.variant {
    case .article: articleVariant(run)
    case .corrected: correctedVariant(run)
    }
}
