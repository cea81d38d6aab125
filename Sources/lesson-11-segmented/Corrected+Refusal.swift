import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the corrected variant treats a segment the server refuses for now (503 or 429: too many
/// connections): it waits as the answer says, and gives up on a server that never lets it in.
enum Refusal {
    /// Retry-After in seconds (RFC 9110, section 10.2.3); an answer without one, or with a
    /// date, waits `waitWithoutRetryAfter`. Capped, so that a hostile server cannot park the download.
    static func retryAfter(_ response: HTTPURLResponse) -> Double {
        let given = response.value(forHTTPHeaderField: "Retry-After").flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        return min(max(given ?? waitWithoutRetryAfter, 0), longestWait)
    }

    static let waitWithoutRetryAfter = 1.0
    static let longestWait = 30.0
    /// Refused this often, a segment fails the attempt: the server will not let it in.
    static let mostPerSegment = 20
}
