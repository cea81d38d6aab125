import Foundation
import LabFixtures
import TestServers
import Testing

/// The lab server's 304s beside nginx's, for the same conditional requests, each made with that
/// server's own ETag and Last-Modified (curl asks, so neither side is Foundation's). Where RFC 9110
/// and nginx's defaults part, the difference itself is what is asserted.
@Suite(.serialized)
struct ConditionalAgainstNginxTests {
    /// What a client says it has.
    enum Ask: CaseIterable {
        case currentTag, weakTag, anyTag, listWithTheTag, otherTag, exactDate, laterDate, earlierDate
        case tagAndEarlierDate, otherTagAndExactDate, tagAndRange

        func headers(etag: String, lastModified: String) -> [String] {
            switch self {
            case .currentTag: ["If-None-Match: \(etag)"]
            case .weakTag: ["If-None-Match: W/\(etag)"]
            case .anyTag: ["If-None-Match: *"]
            case .listWithTheTag: ["If-None-Match: \"other\", \(etag)"]
            case .otherTag: ["If-None-Match: \"other\""]
            case .exactDate: ["If-Modified-Since: \(lastModified)"]
            case .laterDate: ["If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT"]
            case .earlierDate: ["If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT"]
            case .tagAndEarlierDate: ["If-None-Match: \(etag)", "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT"]
            case .otherTagAndExactDate: ["If-None-Match: \"other\"", "If-Modified-Since: \(lastModified)"]
            case .tagAndRange: ["If-None-Match: \(etag)", "Range: bytes=10-"]
            }
        }
    }

    @Test(.enabled(if: runningInCI || executable(named: "nginx") != nil,
                   "nginx is not installed; the real-peer test is skipped (apt-get install nginx)"))
    func theLabAndNginxAnswerConditionalsAlike() throws {
        let nginx = try Nginx(rate: "0")
        let nginxBefore = try Nginx(rate: "0", directives: "if_modified_since before;")
        let fixture = Fixture(name: "conditional.bin", size: 100_000)
        try fixture.write(to: nginx.root.appendingPathComponent(fixture.name))
        try fixture.write(to: nginxBefore.root.appendingPathComponent(fixture.name))
        try withLabServer { lab in
            let labURL = lab.url(for: fixture).absoluteString
            for ask in Ask.allCases {
                let fromLab = try Self.status(of: ask, at: labURL)
                let fromNginx = try Self.status(of: ask, at: nginx.url(fixture.name))
                let fromNginxBefore = try Self.status(of: ask, at: nginxBefore.url(fixture.name))
                switch ask {
                case .laterDate:
                    // RFC 9110 §13.1.3: not modified when the date is at or after Last-Modified; nginx's
                    // default (`if_modified_since exact`) wants the same date.
                    #expect(fromLab == 304 && fromNginx == 200 && fromNginxBefore == 304, "\(ask)")
                case .tagAndEarlierDate:
                    // RFC 9110 §13.2.2: If-None-Match decides and If-Modified-Since is not read; nginx
                    // answers 304 only when both say "not modified".
                    #expect(fromLab == 304 && fromNginx == 200, "\(ask)")
                default:
                    #expect(fromLab == fromNginx && fromNginx == fromNginxBefore, "\(ask): the lab \(fromLab), nginx \(fromNginx)")
                    #expect([200, 206, 304].contains(fromLab), "\(ask): \(fromLab)")
                }
            }
            #expect(try Self.status(of: .currentTag, at: labURL) == 304)
            #expect(try Self.status(of: .otherTag, at: labURL) == 200)
        }
    }

    /// The status a GET with `ask`'s headers gets, the validators taken from a HEAD to the same URL.
    static func status(of ask: Ask, at url: String) throws -> Int {
        let head = try curl(["-sI", url])
        func field(_ name: String) throws -> String {
            let line = try #require(head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }, "\(url): no \(name)")
            return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
        }
        let headers = ask.headers(etag: try field("ETag"), lastModified: try field("Last-Modified"))
        let code = try curl(["-s", "-o", "/dev/null", "-w", "%{http_code}"] + headers.flatMap { ["-H", $0] } + [url])
        return try #require(Int(code), "\(url): \(code)")
    }

    static func curl(_ arguments: [String]) throws -> String {
        let program = try #require(executable(named: "curl"), "curl is not installed")
        let finished = try ChildProcess.runProgram(program, arguments, timeout: 30)
        #expect(finished.status == 0, "curl \(arguments): \(finished.stderr)")
        return finished.stdout
    }
}
