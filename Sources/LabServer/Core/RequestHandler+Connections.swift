import LabVocabulary
import NIOCore
import NIOHTTP1

/// `connections:`, a limit on one file's GETs at once: each fixture GET is counted from its
/// answer's start to its end (or its connection's), and one past the limit is refused.
extension RequestHandler {
    /// Counts this GET as answering; false when `limit` GETs of the same URL and run already are.
    /// A HEAD is not counted: it sends no body.
    func startAnswering(_ fixtureRequest: FixtureRequest, limit: Int?, request: HTTPRequestHead) -> Bool {
        guard request.method == .GET else { return true }
        guard core.claimAnswering(fixtureRequest.attemptKey, limit: limit) else { return false }
        answeringKey = fixtureRequest.attemptKey
        return true
    }

    /// Called at every response's end and when the connection closes; counts once.
    func stopAnswering() {
        guard let key = answeringKey else { return }
        answeringKey = nil
        core.releaseAnswering(key)
    }

    /// As a server refuses a client with too many connections open: 503, and when to try again.
    func refuseBeyondLimit(_ limit: Int, attempt: Int, request: HTTPRequestHead, context: ChannelHandlerContext) {
        let wait = Int(ConnectionLimit.retryAfterSeconds)
        sendText(.serviceUnavailable, "\(ConnectionLimit.pageOpening): at most \(limit); try again in \(wait) s",
                 extraHeaders: [("Retry-After", String(wait))], attempt: attempt, request: request, context: context)
    }
}

/// What a GET past `connections:` is told: the `Retry-After` the lab's checks hold a client to.
public enum ConnectionLimit {
    public static let retryAfterSeconds = 1.0
    /// How the 503's page begins: a file that holds it had the page written as a range.
    public static let pageOpening = "too many downloads of this file at once"
}
