/// Lesson 03: download to disk with an OutputStream opened for appending, and resume with Range.
///
/// Follows "NSURLConnection下载文件并监测下载进度" (its OutputStream download with a HEAD request for
/// the total) and §4 of "网络篇 - 03.NSURLConnection应用场景". Memory stays flat because each chunk
/// goes to the file as it arrives instead of into one growing buffer. A broken download resumes
/// from the size of the partial file with `Range: bytes=N-`.
///
/// Article.swift keeps the article's logic, defects included; Corrected.swift fixes them.
/// Read Lessons/03-outputstream.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit

Lesson(.outputStream).run { run in
    switch run.variant {
    case .article: articleVariant(run)
    case .corrected: correctedVariant(run)
    }
}
