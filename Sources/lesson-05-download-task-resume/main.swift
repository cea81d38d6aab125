/// Lesson 05: a download task, paused with resume data and resumed from it.
///
/// Follows "NSURLSession VS NSURLConnection" (Start, Pause with `cancelByProducingResumeData:`,
/// Resume with `downloadTaskWithResumeData:`, and moving the file out of the temporary location
/// in `didFinishDownloadingToURL:`) and the download-task listing of "iOS 断点续传" (progress from
/// `didWriteData`, resume data written to disk on pause).
///
/// Foundation on Linux cannot do this: its `cancel(byProducingResumeData:)` hands back nil and
/// its `downloadTask(withResumeData:)` fails. The lesson shows that live first, then downloads
/// with `ResumableDownloadTask` (LabKit), a download task built on a data task that keeps the
/// resume data contract: an Apple-format blob, `Range` + `If-Range`, the same delegate calls.
///
/// `ArticleDownload` keeps the articles' logic, defects included. `CorrectedDownload` fixes them.
/// Read Lessons/05-download-task-resume.md next to this file.
import EmbeddedServer
import LabKit

Lesson(.downloadTaskResume).run { run in
    showWhatFoundationDoes(run)
    switch run.variant {
    case .article: return ArticleDownload(run)
    case .corrected: return CorrectedDownload(run)
    }
}
