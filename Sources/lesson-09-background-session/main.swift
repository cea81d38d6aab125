/// Lesson 09: the app goes away, the download goes on: a background session.
///
/// "NSURLSession VS NSURLConnection" lists, as NSURLSession's first gain, that a download goes on
/// after the user presses Home; its code then makes a default session, whose download lives and
/// dies with the app. This lesson runs the app as iOS does: in a process the system suspends,
/// ends and relaunches (`--life`), beside a transfer service that stands in for Apple's.
///
/// `ArticleApp` keeps the article's default session, and its defects. `CorrectedApp` uses a
/// background configuration as Apple's rules require. The phone around them is the lab's: read
/// Lessons/09-background-session.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit

Lesson(.backgroundSession).run { run in
    switch run.variant {
    case .article: articleVariant(run)
    case .corrected: correctedVariant(run)
    }
}
