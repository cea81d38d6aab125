/// Lesson 05: a download task, paused with resume data and resumed from it.
///
/// Follows "NSURLSession VS NSURLConnection" (Start, Pause with `cancelByProducingResumeData:`,
/// Resume with `downloadTaskWithResumeData:`, and moving the file out of the temporary location
/// in `didFinishDownloadingToURL:`) and the download-task listing of "iOS 断点续传" (progress from
/// `didWriteData`, resume data written to disk on pause).
///
/// The code is Apple's API as an app writes it: a `URLSessionDownloadDelegate`, tasks from a
/// `URLSession`. Foundation on Linux cannot pause and resume them: its
/// `cancel(byProducingResumeData:)` hands back nil and its `downloadTask(withResumeData:)` fails.
/// The lesson shows that live first; then, on Linux, the session `run.makeSession` hands back is
/// LabKit's `ResumableDownloadSession`, whose download tasks keep the resume data contract (an
/// Apple-format blob, `Range` + `If-Range`, the same delegate calls). On a Mac it is Apple's own.
///
/// `ArticleDownload` keeps the articles' logic, defects included. `CorrectedDownload` fixes them.
/// Read Lessons/05-download-task-resume.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit

Lesson(.downloadTaskResume).run { run in
    showWhatFoundationDoes(run)
    switch run.variant {
    case .article: return articleVariant(run)
    case .corrected: return correctedVariant(run)
    }
}
