import Foundation
@testable import LabServer
import LabVocabulary
import TestServers
import Testing

/// `connections:<n>`: a server that allows n downloads of a file at once, as a per-client
/// connection limit does, for lesson 11's segmented downloads.
@Suite("A limit on GETs at once")
struct ConnectionLimitTests {
    /// Two GETs held at a stall fill a limit of two: a third is refused with 503 and
    /// `Retry-After`, and once one of the two hangs up, the next is answered in full.
    @Test func aGetPastTheLimitIsRefusedUntilOneEnds() throws {
        try withLabServer { server in
            let path = "/fixtures/limited?size=64KiB&faults=connections:2+stall:1KiB*2,connections:2*10"
            var held: [RawHTTPConnection] = []
            for _ in 0..<2 {
                let connection = try RawHTTPConnection(port: server.port)
                try connection.sendRequest("GET", path)
                held.append(connection)
            }
            #expect(HostileClientTests.eventually(within: 5) { server.requestLog.filter(\.stalled).count == 2 })

            let refused = try fetch(server, "GET", path)
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After") == "1")
            #expect(String(decoding: refused.body, as: UTF8.self).contains("at most 2"))

            held.removeFirst()  // closes its socket: the server counts that GET as ended
            var answered: RawResponse?
            #expect(HostileClientTests.eventually(within: 5) {
                answered = try? fetch(server, "GET", path)
                return answered?.status == 200
            })
            #expect(answered?.body.count == 64 << 10)
            withExtendedLifetime(held) {}
        }
    }

    /// Without the fault nothing is counted against anyone: eight GETs at once are all answered.
    @Test func withoutTheFaultEveryGetIsAnswered() async throws {
        try await withLabServer { server in
            let statuses = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<8 {
                    group.addTask { (try? fetch(server, "GET", "/fixtures/free?size=256KiB&faults=throttle:1MiB*8"))?.status ?? 0 }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 8))
        }
    }
}
