/// Lesson 04: a URLSession data task with its own data delegate, resumed with Range.
///
/// Follows the NSURLSessionDataTask listing of "iOS 断点续传": the response is allowed with
/// `completionHandler(.allow)`, each chunk arrives in `didReceive data`, and success and failure
/// meet in `didCompleteWithError`, which replaces NSURLConnection's two end callbacks.
///
/// Two Linux facts shape the code: a session's delegate queue has no limit, so the lab gives the
/// session a bounded, serial one when the lesson passes nil (`run.makeSession`), and a slow disk
/// slows the sender instead of filling memory; and `countOfBytesReceived` stays 0, so the lesson
/// counts bytes itself.
///
/// Article.swift keeps the article's logic, defects included; Corrected.swift fixes them.
/// Read Lessons/04-session-data-task.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit

Lesson(.sessionDataTask).run { run in
    switch run.variant {
    case .article: articleVariant(run)
    case .corrected: correctedVariant(run)
    }
}
