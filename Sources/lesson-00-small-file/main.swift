/// Lesson 00: a small file in one call, and what one call costs.
///
/// Follows §1 of "网络篇 - 03.NSURLConnection应用场景" (one asynchronous request whose completion
/// handler gets the data) and the synchronous download in "IOS如何根据URL下载内容". Two one-call
/// ways, chosen with `--way`:
/// - `completion-handler`: a URLSession data task; the handler gets the whole body at the end.
/// - `contents-of`: `Data(contentsOf:)`; the calling thread waits until the whole body is in memory.
/// Either way there is no progress to show, nothing to resume, and the whole body sits in memory.
///
/// Article.swift keeps the article's logic, defects included; Corrected.swift fixes them.
/// Read Lessons/00-small-file.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit
import LabVocabulary

Lesson(.smallFile, ways: SmallFileWay.self).run { run, way in
    switch run.variant {
    case .article: articleVariant(run, way)
    case .corrected: correctedVariant(run, way)
    }
}
