import Foundation
import LabFixtures
import LabVocabulary

/// Where a request target leads. Parsing is separate from answering so the rules for
/// URLs can be read (and tested) in one place.
enum Route {
    case index
    case fixture(FixtureRequest)
    /// `/fixtures/<name>.sha256`: the digest in `sha256sum` format.
    case checksum(FixtureRequest)
    case notFound(path: String)

    /// Throws a one-line `LabError` for a known path with a bad query (answered with 400).
    init(target: String) throws {
        guard let components = URLComponents(string: target) else {
            throw LabError("bad request target \"\(target)\"")
        }
        let path = components.percentEncodedPath
        if path == "/" {
            self = .index
            return
        }
        let prefix = "/fixtures/"
        guard path.hasPrefix(prefix) else {
            self = .notFound(path: path)
            return
        }
        let name = String(path.dropFirst(prefix.count))
        let checksumSuffix = ".sha256"
        if name.hasSuffix(checksumSuffix), Fixture.isValidName(String(name.dropLast(checksumSuffix.count))) {
            self = .checksum(try FixtureRequest(name: String(name.dropLast(checksumSuffix.count)), components: components))
        } else if Fixture.isValidName(name) {
            self = .fixture(try FixtureRequest(name: name, components: components))
        } else {
            self = .notFound(path: path)
        }
    }
}

/// The query of a fixture URL: `?size=64MiB&faults=drop:40pct,ok&content=text&run=abc`, plus the
/// `attempt` and `hops` items that redirects and tests add.
struct FixtureRequest {
    static let defaultSize: Int64 = 1 << 20

    let name: String
    let size: Int64
    let faults: FaultScript
    /// `content=text` or `content=binary`; without it, what the fault script calls for.
    let content: FixtureContent
    /// Set when the request pins its attempt instead of taking the next one.
    let pinnedAttempt: Int?
    /// Redirects still to go in a redirect chain.
    let remainingHops: Int?
    /// Requests with the same key share one attempt counter. `attempt` and `hops` are left
    /// out so the hops of one redirect chain all count as the attempt that started it.
    let attemptKey: String
    /// The `run=` token: each run of a program counts its attempts, and has its stalls, apart.
    let run: String?

    private let path: String
    /// The query items exactly as the client encoded them, to be echoed in a Location.
    private let encodedItemsWithoutAttempt: [Substring]

    init(name: String, components: URLComponents) throws {
        let items = try Self.items(of: components.percentEncodedQuery)
        func value(_ itemName: String) -> String? {
            items.first { $0.name == itemName }?.value
        }

        self.name = name
        path = components.percentEncodedPath
        run = value("run")

        if let sizeText = value("size") {
            let parsed = try ByteSize.parse(sizeText)
            guard parsed <= Fixture.maximumSize else {
                throw LabError("bad size \"\(sizeText)\": the largest fixture is 64GiB")
            }
            size = parsed
        } else {
            size = Self.defaultSize
        }
        faults = try FaultScript.parse(value("faults") ?? "")
        try faults.check(fixtureSize: size)
        content = try value("content").map { text in
            guard let content = FixtureContent(rawValue: text) else {
                throw LabError("bad content \"\(text)\": expected \(FixtureContent.allCases.map(\.rawValue).joined(separator: " or "))")
            }
            return content
        } ?? faults.content
        pinnedAttempt = try value("attempt").map { text in
            guard let attempt = Int(text), attempt >= 1 else {
                throw LabError("bad attempt \"\(text)\": expected a number from 1")
            }
            return attempt
        }
        remainingHops = try value("hops").map { text in
            guard let hops = Int(text), hops >= 0 else {
                throw LabError("bad hops \"\(text)\": expected a number from 0")
            }
            return hops
        }

        let isAttemptItem: (Substring) -> Bool = { item in
            let itemName = item.prefix { $0 != "=" }
            return itemName == "attempt" || itemName == "hops"
        }
        encodedItemsWithoutAttempt = (components.percentEncodedQuery ?? "")
            .split(separator: "&")
            .filter { !isAttemptItem($0) }
        attemptKey = path + "?" + items
            .filter { $0.name != "attempt" && $0.name != "hops" }
            .map { "\($0.name)=\($0.value)" }
            .joined(separator: "&")
    }

    /// The query's items, names and values percent-decoded. Unlike HTML forms, "+" stays itself,
    /// which fault scripts need ("throttle:4MiB+drop:1MiB"). An item whose `%XX` do not spell
    /// UTF-8 is refused: `URLComponents` would drop its value, and a bad script would be none.
    static func items(of query: String?) throws -> [(name: String, value: String)] {
        try (query ?? "").split(separator: "&").map { item in
            let name = item.prefix { $0 != "=" }
            let value = item.dropFirst(name.count).dropFirst()
            guard let decodedName = PercentEncoding.decoded(name), let decodedValue = PercentEncoding.decoded(value) else {
                throw LabError("bad query item \"\(String(item).shortened(to: 200))\": its %XX must spell UTF-8")
            }
            return (decodedName, decodedValue)
        }
    }

    /// The same URL pinned to `attempt`, with `hops` redirects still to go.
    func redirectLocation(attempt: Int, hops: Int) -> String {
        let items = encodedItemsWithoutAttempt + ["attempt=\(attempt)", "hops=\(hops)"]
        return path + "?" + items.joined(separator: "&")
    }
}
