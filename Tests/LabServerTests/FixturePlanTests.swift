import LabFixtures
@testable import LabServer
import LabVocabulary
import Testing

/// Which answer wins where the faults of one attempt, and the request, compete for one response:
/// each pair decided by `FixturePlan.decide`, with no socket. The end-to-end tests show the
/// handler carrying the same plans out over real connections.
struct FixturePlanTests {
    static let fixture = Fixture(name: "plan.bin", size: 1 << 20)
    static let changed = Fixture(name: "plan.bin", size: 1 << 20, generation: 1)
    static let tail = "bytes=1000-"
    static let acceptsGzip = ["gzip, deflate"]

    static func plan(_ faults: String, _ ask: FixturePlan.Ask = FixturePlan.Ask(), fixture: Fixture = fixture) throws -> FixturePlan {
        let script = try FaultScript(parsing: faults)
        return FixturePlan.decide(ask, faults: AttemptFaults(script.faults(forAttempt: 1)), fixture: fixture)
    }

    static func body(_ selection: RangeSelection, limit: Int? = nil) -> FixturePlan { .answer(.identity(selection), connectionLimit: limit) }
    static let rest = body(.partial(first: 1000, last: (1 << 20) - 1))

    struct Pair: CustomTestStringConvertible, Sendable {
        let name: String
        let faults: String
        var fixture = FixturePlanTests.fixture
        let ask: FixturePlan.Ask
        let expected: FixturePlan
        var testDescription: String { name }
    }

    static let current = FixturePlan.Ask(ifNoneMatch: [fixture.etag])
    static let pairs: [Pair] = [
        // A redirect goes first, whatever else the attempt holds; its last hop plays the rest.
        Pair(name: "redirect over status", faults: "redirect:2+status:500", ask: .init(), expected: .redirect(hopsLeft: 1)),
        Pair(name: "a chain's end plays the status", faults: "redirect:2+status:500", ask: .init(hopsLeft: 0), expected: .status(code: 500)),
        Pair(name: "redirect over connections", faults: "redirect:1+connections:1", ask: .init(), expected: .redirect(hopsLeft: 0)),
        Pair(name: "redirect over a current copy", faults: "redirect:1", ask: current, expected: .redirect(hopsLeft: 0)),
        Pair(name: "redirect over gzip", faults: "redirect:1+gzip", ask: .init(acceptEncoding: acceptsGzip), expected: .redirect(hopsLeft: 0)),
        Pair(name: "a chain's end serves the range", faults: "redirect:1", ask: .init(range: tail, hopsLeft: 0), expected: rest),
        // A scripted status comes before any answer about the file: no slot is taken for it.
        Pair(name: "status over connections", faults: "status:503+connections:1", ask: .init(), expected: .status(code: 503)),
        Pair(name: "status over a current copy", faults: "status:404", ask: current, expected: .status(code: 404)),
        Pair(name: "status over gzip", faults: "status:500+gzip", ask: .init(acceptEncoding: acceptsGzip), expected: .status(code: 500)),
        Pair(name: "status over a range", faults: "status:410+ignore-range", ask: .init(range: tail), expected: .status(code: 410)),
        // Every answer about the file waits for its slot.
        Pair(name: "connections over a current copy", faults: "connections:2", ask: current,
             expected: .answer(.notModified(compressed: false), connectionLimit: 2)),
        Pair(name: "connections over gzip", faults: "connections:3+gzip", ask: .init(acceptEncoding: acceptsGzip),
             expected: .answer(.compressed, connectionLimit: 3)),
        Pair(name: "connections over a range", faults: "connections:4", ask: .init(range: tail), expected: body(.partial(first: 1000, last: (1 << 20) - 1), limit: 4)),
        // A current copy gets no body: before gzip, before Range.
        Pair(name: "a current copy over gzip", faults: "gzip", ask: .init(ifNoneMatch: ["W/" + fixture.etag], acceptEncoding: acceptsGzip),
             expected: .answer(.notModified(compressed: true), connectionLimit: nil)),
        Pair(name: "a current copy over a range", faults: "", ask: .init(range: tail, ifNoneMatch: [fixture.etag]),
             expected: .answer(.notModified(compressed: false), connectionLimit: nil)),
        Pair(name: "ignore-conditionals over a current copy", faults: "ignore-conditionals", ask: current, expected: body(.full)),
        Pair(name: "no-validators over a current copy", faults: "no-validators", ask: current, expected: body(.full)),
        Pair(name: "If-None-Match over If-Modified-Since", faults: "same-date", fixture: changed,
             ask: .init(ifNoneMatch: [fixture.etag], ifModifiedSince: [fixture.lastModified]), expected: body(.full)),
        Pair(name: "same-date's old date says current", faults: "same-date", fixture: changed,
             ask: .init(ifModifiedSince: [fixture.lastModified]), expected: .answer(.notModified(compressed: false), connectionLimit: nil)),
        // gzip for a client that takes it: the whole encoding, whatever the Range.
        Pair(name: "gzip over a range", faults: "gzip", ask: .init(range: tail, acceptEncoding: acceptsGzip),
             expected: .answer(.compressed, connectionLimit: nil)),
        Pair(name: "gzip over ignore-range", faults: "gzip+ignore-range", ask: .init(range: tail, acceptEncoding: acceptsGzip),
             expected: .answer(.compressed, connectionLimit: nil)),
        Pair(name: "gzip for a client that refuses it", faults: "gzip", ask: .init(range: tail, acceptEncoding: ["identity"]), expected: rest),
        // The range, as asked, ignored or shifted.
        Pair(name: "ignore-range over a range", faults: "ignore-range", ask: .init(range: tail), expected: body(.full)),
        Pair(name: "shift-range over a range", faults: "shift-range:+24", ask: .init(range: tail),
             expected: body(.partial(first: 1024, last: (1 << 20) - 1))),
        Pair(name: "ignore-range over shift-range", faults: "ignore-range+shift-range:+24", ask: .init(range: tail), expected: body(.full)),
        Pair(name: "no-validators over If-Range", faults: "no-validators", ask: .init(range: tail, ifRange: fixture.etag), expected: body(.full)),
        Pair(name: "If-Range of another version", faults: "", fixture: changed, ask: .init(range: tail, ifRange: fixture.etag), expected: body(.full)),
        Pair(name: "If-Range of this version", faults: "", ask: .init(range: tail, ifRange: fixture.etag), expected: rest),
        Pair(name: "a range past the end", faults: "", ask: .init(range: "bytes=\(2 << 20)-"), expected: body(.unsatisfiable)),
        // Body faults change how the body goes, not which answer it is.
        Pair(name: "drop, stall and latency leave the answer alone", faults: "drop:10pct+stall:1KiB+latency:5ms+throttle:1MiB",
             ask: .init(range: tail), expected: rest),
    ]

    @Test(arguments: pairs)
    func theWinnerOfEachPair(_ pair: Pair) throws {
        #expect(try Self.plan(pair.faults, pair.ask, fixture: pair.fixture) == pair.expected)
    }
}
