/// Lesson 06: a connection started on a background thread, and the run loop that delivers it.
///
/// Follows §6 of "网络篇 - 03.NSURLConnection应用场景" (a connection reports back through the run
/// loop of the thread that started it, or through a delegate queue), note 5 of
/// "NSURLConnection下载文件并监测下载进度" (start the download on a GCD thread and keep that thread
/// in `[[NSRunLoop currentRunLoop] run]`), and the run-loop modes of "iOS 断点续传" (a connection
/// in the default mode stalls while the UI is tracking; schedule it in the common modes).
///
/// The default run shows the cases live, each on the first 64 KiB of the file:
/// (a) a thread that never runs its run loop hears nothing; (c) a delegate queue needs no run loop;
/// (d) a loop running in another mode delivers only what is scheduled in that mode; (e) several
/// connections at once, started the variant's way. Then (b), the download itself, on a background
/// thread that runs its run loop, resuming like lesson 03. The cases live in Cases.swift.
/// `--way crowd` makes case e the download: the file and one more transfer per core, at once.
///
/// `ArticleDownload` keeps the article's threading: a GCD worker parked in its run loop.
/// `CorrectedDownload` uses a thread of its own, which exits when the transfer ends.
/// Read Lessons/06-runloop-thread.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit
import LabVocabulary

Lesson(.runLoopThread, ways: RunLoopThreadWay.self).run { run, way in
    if way == .story { Cases(run).show() }
    switch run.variant {
    case .article: return articleVariant(run, way)
    case .corrected: return correctedVariant(run, way)
    }
}
