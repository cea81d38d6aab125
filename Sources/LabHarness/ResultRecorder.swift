import ArgumentParser
import Foundation
import LabFixtures
import LabKit
import LabPlatform
import LabVocabulary
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns what happened in a run into the result record: was the file complete, and is it right?
struct ResultRecorder<Way: LessonWay & ExpressibleByArgument> {
    let lesson: Lesson<Way>
    let options: LessonOptions
    let way: Way?
    let source: DownloadSource
    let file: URL
    /// What the inspector recorded: every exchange of the run, the harness's own HEAD included.
    let exchanges: HTTPExchangeLog
    let attempts: Int
    let lastResult: AttemptResult
    let wallSeconds: Double
    /// What the lesson verified itself (`LessonRun.verified(_:)`), if it did.
    var ownCheck: TransferCheck?
    /// False for a run ended early by a limit: hashing a 64 GiB fixture for the record's expected
    /// digest would keep it going for a minute past its limit.
    var hashesTheFixture = true
    /// What the code's progress reports said.
    var progress: ProgressRecord?

    func result() throws -> LessonResult {
        let exchanges = self.exchanges.exchanges
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
        // Side demonstrations fetch from the fault-free URL; they are not part of the download.
        let sideDemonstration = source.faultFreeURL == source.url ? nil : ShownURL.redacted(source.faultFreeURL)
        let bytesReceived = exchanges.filter { $0.url != sideDemonstration }.reduce(0) { $0 + $1.bodyBytes }
        let known = Verdict(
            outcome: .verified, status: .success,
            // The embedded server's file as the run left it, which a `change` may have replaced
            // since the last response that carried a digest.
            expected: options.sha256
                ?? (hashesTheFixture ? source.fixtureNow?.sha256Hex() : nil)
                ?? exchanges.last(where: { $0.reprDigestSHA256 != nil })?.reprDigestSHA256
                ?? askedForDigest(),
            resourceBytes: Self.resourceBytes(in: exchanges) ?? source.fixture?.size, fileBytes: fileBytes)
        let verdict = switch lastResult {
        case .failed(let error): failed(error, known)
        case .finished: if let ownCheck { checked(ownCheck, known) } else { try readBack(known) }
        }
        var result = LessonResult(
            lesson: lesson.id,
            variant: options.variant,
            way: way?.rawValue,
            url: ShownURL.redacted(source.url),
            output: file.path,
            outcome: verdict.outcome,
            exitCode: verdict.status.rawValue,
            verified: verdict.outcome == .verified,
            expectedSHA256: verdict.expected,
            actualSHA256: verdict.actual,
            resourceBytes: verdict.resourceBytes,
            fileBytes: verdict.fileBytes,
            bytesReceived: bytesReceived,
            bytesWritten: Int64(SimulatedDisk.bytesWritten.load(ordering: .relaxed)),
            bytesDownloadedAgain: verdict.resourceBytes.map { max(0, bytesReceived - $0) } ?? 0,
            attempts: attempts,
            resumedFrom: Self.resumeOffsets(in: exchanges),
            wallSeconds: wallSeconds,
            verificationSeconds: verdict.verificationSeconds,
            cpuSeconds: Platform.cpuSeconds(),
            peakRSSBytes: max(Platform.peakResidentBytes(), ResidentPeak.seen),
            // An upload's throughput is what was sent, not the short answer that came back.
            throughputBytesPerSecond: wallSeconds > 0 ? Double(ownCheck?.expectedBytes ?? bytesReceived) / wallSeconds : 0,
            writeDelayMicroseconds: options.writeDelayMicroseconds,
            requests: self.exchanges.exchanges,  // with the HEAD of askedForDigest(), if any
            error: verdict.failure
        )
        result.progress = progress
        result.startedAProgram = ProgramsStarted.byTheCode
        return result
    }

    /// How the run came out, and what the record says of the file.
    private struct Verdict {
        var outcome: Outcome
        var status: ExitStatus
        var failure: LessonResult.ErrorRecord?
        var expected: String?
        var actual: String?
        var resourceBytes: Int64?
        var fileBytes: Int64
        var verificationSeconds = 0.0
    }

    /// The last attempt failed: its error says which outcome and exit status.
    private func failed(_ error: any Error, _ known: Verdict) -> Verdict {
        var verdict = known
        verdict.status = exitStatus(for: error)
        verdict.outcome = switch (error as? DownloadError, verdict.status) {
        case (.tookTooLong?, _): .timedOut
        case (_, .localIOFailed): .ioFailed
        case (_, .verificationFailed): .badInput
        case (_, .unresponsive): .unresponsive
        case (_, .misuse): .misuse
        default: .transferFailed
        }
        let reason = attempts >= options.maxAttempts && lastResult.isResumable ? "gave up after \(attempts) attempts: " : ""
        var record = LessonResult.ErrorRecord(error)
        // A frozen app (exit 75), or a later launch that failed (lesson 10), may have the whole
        // file: it is not a partial one.
        // (Lesson 11's file has its full size from the start: only its plan says what is missing.)
        let whole = verdict.status == .unresponsive || (lesson.id.launches > 1 && known.resourceBytes == known.fileBytes)
        let kept = known.fileBytes > 0 && !lesson.uploads
            ? (whole ? " (the file at \(file.path) is kept as it was)" : " (partial file kept at \(file.path))") : ""
        record.message = reason + record.message + kept
        verdict.failure = record
        return verdict
    }

    /// The lesson checked the transfer itself (an upload): its check is the verdict.
    private func checked(_ check: TransferCheck, _ known: Verdict) -> Verdict {
        var verdict = known
        verdict.expected = check.expectedSHA256
        verdict.actual = check.actualSHA256
        verdict.resourceBytes = check.expectedBytes
        verdict.fileBytes = check.actualBytes
        guard !check.matches else { return verdict }
        verdict.outcome = .verificationFailed
        verdict.status = .verificationFailed
        verdict.failure = .init(domain: "DownloadLab", code: Int(verdict.status.rawValue),
                                message: "\(check.actualSide) \(ByteFormat.grouped(check.actualBytes)) bytes, "
                                    + "SHA-256 \(check.actualSHA256 ?? "(none)"); expected "
                                    + "\(ByteFormat.grouped(check.expectedBytes)) bytes, SHA-256 \(check.expectedSHA256)")
        return verdict
    }

    /// The lesson says it is done: the file is read back and its digest compared with the known one.
    private func readBack(_ known: Verdict) throws -> Verdict {
        var verdict = known
        if FileManager.default.fileExists(atPath: file.path) {
            let reading = ContinuousClock.now
            do {
                verdict.actual = try FileDigest.sha256Hex(of: file)
            } catch {
                throw DownloadError.cannotRead(path: file.path, reason: "\(describe(error)), so it cannot be verified")
            }
            verdict.verificationSeconds = (ContinuousClock.now - reading).seconds
        }
        switch (verdict.expected, verdict.actual) {
        case (nil, _):
            verdict.outcome = .unverified
        case (let expected?, let actual?) where expected == actual:
            verdict.outcome = .verified
        case (let expected?, let actual):
            verdict.outcome = .verificationFailed
            verdict.status = .verificationFailed
            let got = actual.map { "got \($0)" } ?? "no file was written"
            let sizes = verdict.resourceBytes.map { " (\(verdict.fileBytes) bytes on disk, resource has \($0))" } ?? ""
            verdict.failure = .init(domain: "DownloadLab", code: Int(verdict.status.rawValue),
                                    message: "SHA-256 mismatch: expected \(expected), \(got)\(sizes)")
        }
        return verdict
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
            guard exchange.method == .get, let range = exchange.range else { return nil }
            if let offset = RangeHeader.start(of: range) { return offset > 0 ? offset : nil }
            // A segment's range (lesson 11) that starts where another range of the run ends is
            // the next segment of a plan; one that starts anywhere else continues a segment
            // where an earlier answer broke off, in this process or in one that was killed.
            guard let offset = RangeHeader.segmentStart(of: range), offset > 0 else { return nil }
            let nextSegment = exchanges.contains { other in
                other.method == .get && other.range.flatMap(RangeHeader.segment(of:))?.last == offset - 1
            }
            return nextSegment ? nil : offset
        }
    }
}
