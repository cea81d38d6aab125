import LabFixtures
import LabVocabulary

/// How the server answers one fixture request, decided from the request, the attempt's faults
/// and the fixture before a byte is written. Where faults compete for one response, the order
/// of `decide`'s steps says which wins, and nothing else does: the handler only carries the plan
/// out (`RequestHandler.answerFixture`), and `FixturePlanTests` holds every pair without a
/// socket. How the body is then sent (drop, stall, throttle, latency) is its `BodyPlan`.
enum FixturePlan: Equatable {
    /// A 302 to the chain's next hop, which has `hopsLeft` more after it.
    case redirect(hopsLeft: Int)
    /// The scripted status and its short page.
    case status(code: Int)
    /// An answer about the file, given once this GET has a slot under `connections:` (nil: no
    /// limit); past the limit it is refused with a 503 instead.
    case answer(Answer, connectionLimit: Int?)

    enum Answer: Equatable {
        /// 304 Not Modified: no body, and the fields that describe the file (the ETag weak
        /// when the answer would have been compressed).
        case notModified(compressed: Bool)
        /// The gzip encoding, whole, with 200 whatever the Range, as nginx's gzip filter answers.
        case compressed
        /// The file: all of it, a range of it, or 416.
        case identity(RangeSelection)
    }

    /// What the plan reads of a request.
    struct Ask: Equatable {
        var range: String?
        var ifRange: String?
        var ifNoneMatch: [String] = []
        var ifModifiedSince: [String] = []
        var acceptEncoding: [String] = []
        /// The hops a redirect chain still has, from the URL; nil on the chain's first request.
        var hopsLeft: Int?
    }

    static func decide(_ ask: Ask, faults: AttemptFaults, fixture: Fixture) -> FixturePlan {
        if let hops = faults.redirectHops, (ask.hopsLeft ?? hops) > 0 { return .redirect(hopsLeft: (ask.hopsLeft ?? hops) - 1) }
        if let code = faults.statusCode { return .status(code: code) }
        return .answer(answer(ask, faults: faults, fixture: fixture), connectionLimit: faults.connectionLimit)
    }

    private static func answer(_ ask: Ask, faults: AttemptFaults, fixture: Fixture) -> Answer {
        let compressed = faults.gzip && AcceptEncoding.allowsGzip(ask.acceptEncoding)
        let lastModified = RequestHandler.lastModified(of: fixture, faults: faults)
        // Before Range: a client whose copy is current gets no body at all (RFC 9110 §13.2.2).
        if !faults.ignoreConditionals, !faults.noValidators,
           ConditionalRequest.notModified(ifNoneMatch: ask.ifNoneMatch, ifModifiedSince: ask.ifModifiedSince,
                                          etag: RequestHandler.etag(of: fixture, compressed: compressed), lastModified: lastModified) {
            return .notModified(compressed: compressed)
        }
        if compressed { return .compressed }
        if faults.ignoreRange { return .identity(.full) }
        let selection = RangeSelection(range: ask.range, ifRange: ask.ifRange, etag: fixture.etag, lastModified: lastModified,
                                       size: fixture.size, validatorsSent: !faults.noValidators)
        return .identity(faults.rangeShift.map(selection.shifted(by:)) ?? selection)
    }
}
