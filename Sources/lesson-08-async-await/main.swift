/// Lesson 08: the same download with async/await, as a class writes it today.
///
/// The delegate-era lessons answer four questions: where the body goes, what happens to memory,
/// how to pause and resume, and what cancelling does. Apple's async URLSession API (the WWDC 2021
/// session "Use async/await with URLSession") asks them again, in fewer lines:
/// - `data(from:)` hands back the whole body at once, as lesson 00's completion handler does;
/// - `bytes(for:)` hands it over as it arrives, as lessons 02 to 04's delegates do;
/// - `download(for:)` writes it to a temporary file, as lesson 05's download task does;
/// - cancelling the Swift Task cancels the transfer, which is how an async Pause is made.
///
/// Foundation on Linux has `data` and `download` but no `bytes(for:)`; LabKit fills it in there,
/// under Apple's names (`URLSession.AsyncBytes`). The default way reads the body with LabKit's
/// `bodyChunks(for:)`, the same type on every system, one step per chunk instead of per byte.
///
/// `ArticleDownload` is the one-liner most tutorials show. `CorrectedDownload` streams, checks and
/// resumes; `--way` picks how it reads the body. Read Lessons/08-async-await.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit
import LabVocabulary

Lesson(.asyncAwait, ways: AsyncAwaitWay.self).run { run, way in
    switch run.variant {
    case .article: articleVariant(run)
    case .corrected: correctedVariant(run, way)
    }
}
