/// Lesson 01: every chunk appended to one buffer in memory, saved at the end.
///
/// Follows the NSURLConnection delegate of "IOS如何根据URL下载内容": an NSMutableData that grows
/// with each `didReceiveData` and is reset on each `didReceiveResponse` (a redirect or a
/// multipart response starts the body afresh). "NSURLConnection下载文件并监测下载进度" warns
/// that memory then grows with the file. Nothing is on disk until the end, so a broken transfer
/// leaves nothing to resume from: every attempt starts over from byte 0.
///
/// Article.swift keeps the article's logic, defects included; Corrected.swift fixes them.
/// Read Lessons/01-in-memory.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit

Lesson(.inMemory).run { run in
    switch run.variant {
    case .article: articleVariant(run)
    case .corrected: correctedVariant(run)
    }
}
