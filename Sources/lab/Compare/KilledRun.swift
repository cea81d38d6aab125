import Foundation
import LabServer
import LabVocabulary

/// A run killed before it could print its record is drawn from the server's side: what the
/// server logged of its requests, and the bytes the lab saw on disk while it ran.
extension ComparisonResults.ExchangeTimeline {
    init(killed run: MeasuredProcess.Finished, logged: [LoggedRequest], server: URL, faults: String, sizeBytes: Int64) {
        self.init(origin: run.startedAt, faults: faults, exchanges: logged.map { $0.exchange(on: server) }, disk: run.disk,
                  sizeBytes: sizeBytes)
    }

    /// `rerun`'s timeline after this one's, the run killed before it, on one time axis: the kill
    /// and the new start are drawn as events.
    func followed(by rerun: Self, killedAt: Double) -> Self {
        var both = self
        let shift = rerun.origin - origin
        both.exchanges += rerun.exchanges
        both.disk += rerun.disk.map { ComparisonResults.DiskSample(t: $0.t + shift, bytes: $0.bytes) }
        both.events = (events ?? []) + [RunEvent(at: killedAt, what: "killed (SIGKILL)"), RunEvent(at: rerun.origin, what: "run again")]
            + (rerun.events ?? [])
        both.sizeBytes = rerun.sizeBytes ?? sizeBytes
        return both
    }
}

extension LoggedRequest {
    /// The request as a run's record would show it, from what the server knows: no validators it
    /// answered with, and a body that stopped short of its Content-Length counted as broken.
    func exchange(on server: URL) -> HTTPExchange {
        let cut = method != .head && responseLength.map { bodyBytesSent < $0 } == true
        var exchange = HTTPExchange(
            method: method, url: server.absoluteString.trimmingSuffix("/") + target, range: range, ifRange: ifRange, status: status,
            contentLength: responseLength, bodyBytes: bodyBytesSent,
            error: cut ? "the body stopped after \(bodyBytesSent) of \(responseLength ?? 0) bytes" : nil)
        exchange.startedAt = arrivedAt
        exchange.firstByteAt = arrivedAt + firstByteSeconds
        exchange.endedAt = lastBodyBytesAt ?? exchange.firstByteAt
        return exchange
    }
}
