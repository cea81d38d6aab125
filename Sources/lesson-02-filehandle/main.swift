/// Lesson 02: download to disk with a FileHandle, seeking to the end before each chunk, and
/// resume from the size of the partial file.
///
/// Follows §3 of "网络篇 - 03.NSURLConnection应用场景" (create an empty file, seek to its end and
/// write every chunk, send a Range header on the next start) and the NSURLConnection listing of
/// "iOS 断点续传" (the same handle-based writing; the total worked out once). Memory stays flat
/// because each chunk goes to the file as it arrives.
///
/// Article.swift keeps the article's logic, defects included; Corrected.swift fixes them.
/// Read Lessons/02-filehandle.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit

Lesson(.fileHandle).run { run in
    switch run.variant {
    case .article: articleVariant(run)
    case .corrected: correctedVariant(run)
    }
}
