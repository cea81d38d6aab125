import Foundation
import LabVocabulary
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns what happened in a run into the result record: was the file complete, and is it right?
struct ResultRecorder {
    let lesson: Lesson
    let options: LessonOptions
    let source: DownloadSource
    let file: URL
    let attempts: Int
    let lastResult: AttemptResult
    let wallSeconds: Double
    /// What the lesson verified itself (`LessonRun.verified(_:)`), if it did.
    var ownCheck: TransferCheck?
    /// False for a run ended early by a limit: hashing a 64 GiB fixture for the record's expected
    /// digest would keep it going for a minute past its limit.
    var hashesTheFixture = true

    func result() throws -> LessonResult {
        let exchanges = HTTPExchangeLog.shared.exchanges
        var fileBytes = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
        // Side demonstrations fetch from the fault-free URL; they are not part of the download.
        let sideDemonstration = source.faultFreeURL == source.url ? nil : ShownURL.redacted(source.faultFreeURL)
        let bytesReceived = exchanges.filter { $0.url != sideDemonstration }.reduce(0) { $0 + $1.bodyBytes }
        var resourceBytes = Self.resourceBytes(in: exchanges) ?? source.fixture?.size
        var expected = options.sha256
            ?? exchanges.last(where: { $0.reprDigestSHA256 != nil })?.reprDigestSHA256
            ?? (hashesTheFixture ? source.fixture?.sha256Hex() : nil)
            ?? askedForDigest()

        var actual: String?
        var verificationSeconds = 0.0
        var outcome: Outcome
        var status: ExitStatus
        var failure: LessonResult.ErrorRecord?
        switch lastResult {
        case .failed(let error):
            status = (error as? DownloadError)?.exitStatus ?? .transferFailed
            outcome = switch (error as? DownloadError, status) {
            case (.tookTooLong?, _): .timedOut
            case (_, .localIOFailed): .ioFailed
            case (_, .verificationFailed): .badInput
            case (_, .unresponsive): .unresponsive
            default: .transferFailed
            }
            let reason = attempts >= options.maxAttempts && lastResult.isResumable
                ? "gave up after \(attempts) attempts: " : ""
            var record = LessonResult.ErrorRecord(error)
            // A frozen app (exit 75) may have the whole file: it is not a partial one.
            let kept = fileBytes > 0 && !lesson.uploads && status != .unresponsive ? " (partial file kept at \(file.path))" : ""
            record.message = reason + record.message + kept
            failure = record
        case .finished where ownCheck != nil:
            let check = ownCheck!
            expected = check.expectedSHA256
            actual = check.actualSHA256
            resourceBytes = check.expectedBytes
            fileBytes = check.actualBytes
            if check.matches {
                outcome = .verified
                status = .success
            } else {
                outcome = .verificationFailed
                status = .verificationFailed
                failure = .init(domain: "DownloadLab", code: Int(status.rawValue),
                                message: "\(check.actualSide) \(ByteFormat.grouped(check.actualBytes)) bytes, "
                                    + "SHA-256 \(check.actualSHA256 ?? "(none)"); expected "
                                    + "\(ByteFormat.grouped(check.expectedBytes)) bytes, SHA-256 \(check.expectedSHA256)")
            }
        case .finished:
            if FileManager.default.fileExists(atPath: file.path) {
                let reading = ContinuousClock.now
                do {
                    actual = try FileDigest.sha256Hex(of: file)
                } catch {
                    throw DownloadError.localIO(path: file.path, reason: "cannot read it back to verify")
                }
                verificationSeconds = (ContinuousClock.now - reading).seconds
            }
            switch (expected, actual) {
            case (nil, _):
                outcome = .unverified
                status = .success
            case (let expected?, let actual?) where expected == actual:
                outcome = .verified
                status = .success
            case (let expected?, _):
                outcome = .verificationFailed
                status = .verificationFailed
                let got = actual.map { "got \($0)" } ?? "no file was written"
                let sizes = resourceBytes.map { " (\(fileBytes) bytes on disk, resource has \($0))" } ?? ""
                failure = .init(domain: "DownloadLab", code: Int(status.rawValue),
                                message: "SHA-256 mismatch: expected \(expected), \(got)\(sizes)")
            }
        }

        return LessonResult(
            lesson: lesson.id,
            variant: options.variant,
            way: options.way,
            url: ShownURL.redacted(source.url),
            output: file.path,
            outcome: outcome,
            exitCode: status.rawValue,
            verified: outcome == .verified,
            expectedSHA256: expected,
            actualSHA256: actual,
            resourceBytes: resourceBytes,
            fileBytes: fileBytes,
            bytesReceived: bytesReceived,
            bytesWritten: Int64(SimulatedDisk.bytesWritten.load(ordering: .relaxed)),
            bytesDownloadedAgain: resourceBytes.map { max(0, bytesReceived - $0) } ?? 0,
            attempts: attempts,
            resumedFrom: Self.resumeOffsets(in: exchanges),
            wallSeconds: wallSeconds,
            verificationSeconds: verificationSeconds,
            cpuSeconds: ProcessMetrics.cpuSeconds(),
            peakRSSBytes: ProcessMetrics.peakRSSBytes(),
            // An upload's throughput is what was sent, not the short answer that came back.
            throughputBytesPerSecond: wallSeconds > 0 ? Double(ownCheck?.expectedBytes ?? bytesReceived) / wallSeconds : 0,
            writeDelayMicroseconds: options.writeDelayMicroseconds,
            requests: HTTPExchangeLog.shared.exchanges,  // with the HEAD of askedForDigest(), if any
            error: failure
        )
    }

    /// A server may publish the digest without sending it on every response: the lab server
    /// answers a file over 16 MiB before it has hashed it. Asked with `Want-Repr-Digest`
    /// (RFC 9530), it waits for the digest. Only for a download that finished and was never told
    /// a digest; a server without the header (nginx) leaves the file unverified, as before.
    private func askedForDigest() -> String? {
        guard case .finished = lastResult, ownCheck == nil else { return nil }
        // Hashing a large file takes the server a while; a server that sends nothing at all is
        // given the run's idle time-out, no more.
        var request = URLRequest(url: source.url, timeoutInterval: min(120, TransferLimits.active.idleSeconds * 2))
        request.httpMethod = "HEAD"
        request.setValue("sha-256=10", forHTTPHeaderField: "Want-Repr-Digest")
        return ((try? URLConnection.sendSynchronousRequest(request))?.response as? HTTPURLResponse)?.reprDigestSHA256
    }

    /// The full length of the resource, from the latest response that states it.
    static func resourceBytes(in exchanges: [HTTPExchange]) -> Int64? {
        for exchange in exchanges.reversed() {
            switch exchange.status {
            case 206?, 416?:
                if let total = exchange.contentRange.flatMap(ContentRange.init(header:))?.total { return total }
            case 200?:
                if let length = exchange.contentLength { return length }
            default:
                continue
            }
        }
        return nil
    }

    /// The offsets that GET requests asked to resume from (`Range: bytes=N-` with N > 0).
    static func resumeOffsets(in exchanges: [HTTPExchange]) -> [Int64] {
        exchanges.compactMap { exchange in
            guard exchange.method == .get, let range = exchange.range, range.hasPrefix("bytes="),
                  range.hasSuffix("-"), let offset = Int64(range.dropFirst("bytes=".count).dropLast()), offset > 0
            else { return nil }
            return offset
        }
    }
}
