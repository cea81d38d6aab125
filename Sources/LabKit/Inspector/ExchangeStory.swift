import Foundation
import LabVocabulary

/// How a run is told on screen: the HTTP lines that matter, then a summary.
package enum ExchangeStory {
    package static func line(for event: HTTPExchangeLog.Event) -> String? {
        switch event {
        case .request(let exchange):
            var line = "→ \(exchange.method) \(target(exchange.url))"
            if let range = exchange.range { line += "  Range: \(range)" }
            if let ifRange = exchange.ifRange { line += "  If-Range: \(ifRange)" }
            if let ifNoneMatch = exchange.ifNoneMatch { line += "  If-None-Match: \(ifNoneMatch)" }
            if let ifModifiedSince = exchange.ifModifiedSince { line += "  If-Modified-Since: \(ifModifiedSince)" }
            return line
        case .redirect(let hop, let location):
            return "← \(status(hop))  Location: \(target(location))"
        case .response(let exchange):
            var line = "← \(status(exchange))"
            if let contentRange = exchange.contentRange { line += "  Content-Range: \(contentRange)" }
            if let length = exchange.contentLength { line += "  Content-Length: \(length)" }
            if let etag = exchange.etag { line += "  ETag: \(etag)" }
            return line
        case .failure:
            return nil
        case .unobserved(let exchange):
            return "→ GET \(target(exchange.url))  (this call shows no status or headers; "
                + "\(ByteFormat.grouped(exchange.bodyBytes)) bytes reached the file)"
        }
    }

    package static func summary(_ result: LessonResult) -> [String] {
        var lines: [String] = []
        switch result.outcome {
        case .verified: lines.append("✔ verified: SHA-256 \(result.actualSHA256 ?? "")")
        case .unverified: lines.append("⚠ downloaded, NOT verified (no expected SHA-256; pass --sha256): \(result.actualSHA256 ?? "")")
        case .verificationFailed: lines.append("✗ verification failed: \(result.error?.message ?? "")")
        case .transferFailed, .ioFailed, .badInput, .unresponsive, .timedOut, .crashed, .misuse:
            lines.append("✗ \(result.outcome.rawValue): \(result.error?.message ?? "")")
        }
        func row(_ name: String, _ value: String) -> String {
            "  " + name.padding(toLength: 18, withPad: " ", startingAt: 0) + value
        }
        // An upload lesson (07) reports what the server received; nothing is on disk or resumed.
        let isUpload = result.lesson.kind == .upload
        lines.append(row("bytes", "\(ByteFormat.grouped(result.fileBytes)) "
                         + (isUpload ? "received by the server" : "on disk") + " (\(ByteFormat.iec(result.fileBytes)))"))
        lines.append(row("time", String(format: "%.2f s in %d attempt%@", result.wallSeconds, result.attempts,
                                        result.attempts == 1 ? "" : "s")))
        lines.append(row("throughput", "\(ByteFormat.iec(Int64(result.throughputBytesPerSecond)))/s"))
        lines.append(row("peak RSS", ByteFormat.iec(result.peakRSSBytes)))
        if result.startedAProgram == true {
            lines.append(row("other programs", "the code started one (a child process), which an iOS app cannot: every check fails"))
        }
        if isUpload { return lines }
        // Where the bytes went: lesson 05 names the file itself, from the response.
        let saved = result.fileBytes > 0 || FileManager.default.fileExists(atPath: result.output)
        lines.append(row("saved as", saved ? result.output : "(nothing saved)"))
        let resumed = result.resumedFrom.map { "byte \(ByteFormat.grouped($0))" }.joined(separator: ", ")
        lines.append(row("resumed from", resumed.isEmpty ? "(no resume)" : resumed))
        lines.append(row("downloaded twice", "\(ByteFormat.grouped(bytesOfOneVersionTwice(result))) bytes"))
        if let life = result.background {
            lines.append(row("app launches", "\(life.launchesByUser) by the user, \(life.relaunchesForEvents) by the system for events"
                             + (life.wakes > 0 ? ", \(life.wakes) woken" : "")))
            if life.serviceRestarts > 0 { lines.append(row("service restarts", "\(life.serviceRestarts)")) }
            lines.append(row("peak RSS, others", "app \(ByteFormat.iec(life.appPeakRSSBytes)), transfer service \(ByteFormat.iec(life.servicePeakRSSBytes))"))
        }
        return lines
    }

    /// The bytes received beyond each version's size, version by version (by ETag): a file
    /// that changed on the server and was fetched again was not downloaded twice; a version
    /// fetched again from byte 0 was. Without ETags every answer counts as one version.
    static func bytesOfOneVersionTwice(_ result: LessonResult) -> Int64 {
        var received: [String: (bytes: Int64, size: Int64)] = [:]
        for exchange in result.requests where exchange.method == .get && (exchange.status == 200 || exchange.status == 206) {
            let size = exchange.contentRange.flatMap(ContentRange.init(header:))?.total
                ?? (exchange.status == 200 ? exchange.contentLength : nil) ?? result.resourceBytes ?? 0
            let kept = received[exchange.etag ?? "", default: (bytes: 0, size: 0)]
            received[exchange.etag ?? ""] = (kept.bytes + exchange.bodyBytes, max(kept.size, size))
        }
        return received.values.reduce(0) { $0 + max(0, $1.bytes - $1.size) }
    }

    private static func status(_ exchange: HTTPExchange) -> String {
        guard let status = exchange.status else { return "(no response)" }
        return HTTPStatus.reason(status).map { "\(status) \($0)" } ?? "\(status)"
    }

    /// Path and query only; the full URL is printed once at the start.
    private static func target(_ url: String) -> String {
        guard let components = URLComponents(string: url) else { return ShownURL.brief(url) }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return ShownURL.brief(path + (components.percentEncodedQuery.map { "?" + $0 } ?? ""))
    }
}
