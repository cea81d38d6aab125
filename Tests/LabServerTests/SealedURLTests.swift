import Foundation
import LabFixtures
import LabServer
import LabVocabulary
import TestServers
import Testing

/// A sealed URL plays the same fixture and faults as the open one, with neither in the URL.
struct SealedURLTests {
    @Test func aSealedURLPlaysItsFaultsWithoutNamingThem() throws {
        try withLabServer { server in
            let fixture = Fixture(name: "plain.bin", size: 4096)
            let sealed = server.sealedURL(for: fixture, faults: "status:404,ok", run: "r1")
            #expect(sealed.path.hasPrefix("/sealed/") && sealed.lastPathComponent == "plain.bin" && sealed.query == nil, "\(sealed)")
            #expect(!sealed.absoluteString.contains("status"), "\(sealed)")

            let target = String(sealed.absoluteString.dropFirst(server.baseURL.absoluteString.count))
            #expect(try fetch(server, "GET", target).status == 404)
            let second = try fetch(server, "GET", target)
            #expect(second.status == 200 && second.body == expectedBytes(fixture))
            // The log shows what the URL stands for; a query the client adds comes after it (and
            // here counts attempts of its own: its first is the 404).
            #expect(try fetch(server, "GET", target + "?companion=1").status == 404)
            let logged = server.requestLog.map(\.target)
            #expect(logged.prefix(2).allSatisfy { $0.hasPrefix("/fixtures/plain.bin?size=4096&faults=status:404,ok&run=r1") }, "\(logged)")
            #expect(logged.last?.hasSuffix("&run=r1&companion=1") == true, "\(logged)")
        }
    }

    @Test func anUnknownKeyIsNotFound() throws {
        try withLabServer { server throws in
            #expect(try fetch(server, "GET", "/sealed/0123456789abcdef/plain.bin").status == 404)
        }
    }
}
