import LabReport
import LabVocabulary

/// Results made up in code, covering every case the report draws: memory that stays flat and
/// memory that grows, resuming and starting over, an expected and an unexpected failure, a
/// refusal, references and limits, timelines, and text that tries to become markup.
enum ReportFixture {
    typealias Run = ComparisonResults.Run

    static let mebibyte: Int64 = 1 << 20
    static let sizes = [mebibyte, 32 * mebibyte, 256 * mebibyte]
    static let faultSize = 32 * mebibyte
    static let hostileLabel = "<script>alert(1)</script>"
    static let hostileHostname = "<img src=x onerror=alert(3)>.local"
    static let hostileCause = "</td><script>alert(2)</script> & \"quoted\" 'cause'"
    static let hostileRange = "<g id=\"evil\"><script>alert(4)</script>"
    static let curlThroughput = 600.0 * Double(mebibyte)

    static func results(label: String = hostileLabel, hostname: String = hostileHostname,
                        lessons: Set<String>? = nil) -> ComparisonResults {
        let environment = ComparisonResults.Environment(
            hostname: hostname, cpuModel: "Test CPU 9000 @ 3.1GHz", cores: 8, memoryBytes: 17_179_869_184,
            operatingSystem: "Ubuntu 24.04.1 LTS", swiftVersion: "Swift version 6.3.1", buildConfiguration: .release,
            serverKind: .embedded, serverURL: "http://127.0.0.1:40211", startedAt: "2025-11-22T10:10:07Z",
            durationSeconds: 842.25)
        let runs = allRuns.filter { lessons?.contains($0.lesson) ?? true }
        let settings = ComparisonResults.Settings(
            preset: .default, sizes: sizes, faultSize: faultSize, lessons: Array(Set(runs.map(\.lesson))).sorted(),
            scenarios: [.clean, .dropResume, .killRerun, .ignoreRange], repetitions: 3,
            slowDiskWriteDelayMicroseconds: 200)
        let largest = sizes[2]
        let references = [
            ComparisonResults.Reference(kind: .curl, detail: "curl 8.5.0 -o FILE", sizeBytes: largest, wallSeconds: 0.4267,
                                        throughputBytesPerSecond: curlThroughput, peakRSSBytes: 9_437_184),
            ComparisonResults.Reference(kind: .wget, detail: "wget 1.21.4 -O FILE", sizeBytes: largest, wallSeconds: 0.5121,
                                        throughputBytesPerSecond: 524_171_264.5, peakRSSBytes: 7_340_032),
            ComparisonResults.Reference(kind: .loopbackLimit, detail: "read to /dev/null", sizeBytes: largest,
                                        wallSeconds: 0.1067, throughputBytesPerSecond: 2_516_582_400, peakRSSBytes: nil),
            ComparisonResults.Reference(kind: .diskLimit, detail: "write 1 MiB blocks, fsync", sizeBytes: largest,
                                        wallSeconds: 0.2133, throughputBytesPerSecond: 1_258_291_200, peakRSSBytes: nil),
        ]
        return ComparisonResults(label: label, environment: environment, settings: settings,
                                 references: references, runs: runs)
    }

    /// Lesson 01 holds the file in memory; lesson 03 streams it to disk; lesson 00 corrected
    /// refuses the largest file.
    static let allRuns: [Run] = {
        var runs: [Run] = []
        for (index, size) in sizes.enumerated() {
            let flat = 20_971_520 + Int64(index) * 1_048_576
            runs.append(run("01-in-memory", "Every chunk in one buffer", .article, .clean, size,
                            peak: 18_874_368 + 2 * size, throughput: 150 * Double(mebibyte) + Double(index)))
            runs.append(run("01-in-memory", "Every chunk in one buffer", .corrected, .clean, size,
                            peak: 18_874_368 + size, throughput: 180 * Double(mebibyte) + Double(index)))
            runs.append(run("03-outputstream", "OutputStream append", .article, .clean, size,
                            peak: flat + 123, throughput: 240 * Double(mebibyte) + 0.25))
            runs.append(run("03-outputstream", "OutputStream append", .corrected, .clean, size,
                            peak: 40_123_456 + Int64(index), throughput: 300 * Double(mebibyte) + 0.5))
            if size < 256 * mebibyte {
                runs.append(run("00-small-file", "Small file in one call", .corrected, .clean, size,
                                peak: 17_825_792 + size, throughput: 400 * Double(mebibyte)))
            } else {
                runs.append(run("00-small-file", "Small file in one call", .corrected, .clean, size, status: .refused,
                                cause: "refused: 268435456 bytes is more than the 64 MiB it will hold",
                                peak: 12_582_912, throughput: 0))
            }
        }
        let fault = faultSize
        runs += [
            run("01-in-memory", "Every chunk in one buffer", .article, .killRerun, fault, again: fault * 3 / 5),
            run("01-in-memory", "Every chunk in one buffer", .corrected, .killRerun, fault, again: fault / 2),
            run("03-outputstream", "OutputStream append", .article, .killRerun, fault, again: 65_536),
            run("03-outputstream", "OutputStream append", .article, .ignoreRange, fault, status: .fail, expected: true,
                cause: "verification failed: SHA-256 mismatch, a 200 reply was appended", again: 13_421_773)
                .drawn(resumeRange: "bytes=9663676-", appends: true),
            run("03-outputstream", "OutputStream append", .article, .dropResume, fault, again: 4_096),
            run("03-outputstream", "OutputStream append", .corrected, .killRerun, fault, again: 131_072),
            run("03-outputstream", "OutputStream append", .corrected, .ignoreRange, fault, again: 13_421_773)
                .drawn(resumeRange: hostileRange, appends: false),
            run("03-outputstream", "OutputStream append", .corrected, .dropResume, fault, status: .fail,
                cause: hostileCause, again: 0),
            run("00-small-file", "Small file in one call", .corrected, .dropResume, fault, status: .refused,
                cause: "refused: too large to hold in memory", peak: 12_582_912, throughput: 0),
        ]
        return runs
    }()

    static func run(_ lesson: String, _ title: String, _ variant: Variant, _ scenario: Scenario, _ size: Int64,
                    status: ComparisonResults.RunStatus = .pass, expected: Bool = false, cause: String? = nil,
                    peak: Int64 = 22_020_096, throughput: Double = 250 * Double(mebibyte), again: Int64 = 0) -> Run {
        let wall = throughput > 0 ? Double(size) / throughput : 0.0125
        let timeline: [ComparisonResults.RSSSample]? = scenario == .clean && size == sizes[2] && status != .refused
            ? (0...10).map { ComparisonResults.RSSSample(t: wall * Double($0) / 10, rssBytes: peak * Int64($0 + 1) / 11) }
            : nil
        return Run(lesson: lesson, title: title, variant: variant, scenario: scenario, sizeBytes: size, status: status,
                   expectedFailure: expected, cause: cause, wallSeconds: wall, cpuSeconds: wall * 0.625,
                   peakRSSBytes: peak, throughputBytesPerSecond: throughput, bytesOnWire: size + again,
                   bytesDownloadedAgain: again,
                   repetitions: [.init(exitCode: status == .pass ? 0 : 1, outcome: status == .pass ? .verified : .transferFailed,
                                       verified: status == .pass, wallSeconds: wall, cpuSeconds: wall * 0.625,
                                       peakRSSBytes: peak, throughputBytesPerSecond: throughput, bytesOnWire: size + again,
                                       bytesDownloadedAgain: again, error: cause)],
                   rssTimeline: timeline)
    }
}

extension ComparisonResults.Run {
    /// This run with a picture of its exchanges: a GET that breaks at 30% of the file, then one
    /// answered 200 with the whole file, `appends` after the partial one or written from byte 0.
    func drawn(resumeRange: String, appends: Bool) -> Self {
        var run = self
        let origin = 1_764_000_000.0, size = sizeBytes, broken = sizeBytes * 3 / 10
        let first = HTTPExchange(method: .get, url: "http://127.0.0.1:40211/fixtures/compare.bin", status: 200,
                                 contentLength: size, bodyBytes: broken, error: ReportFixture.hostileCause)
        let second = HTTPExchange(method: .get, url: "http://127.0.0.1:40211/fixtures/compare.bin", range: resumeRange,
                                  status: 200, contentLength: size, bodyBytes: size)
        var exchanges = [first, second]
        (exchanges[0].startedAt, exchanges[0].firstByteAt, exchanges[0].endedAt) = (origin + 0.02, origin + 0.03, origin + 0.10)
        (exchanges[1].startedAt, exchanges[1].firstByteAt, exchanges[1].endedAt) = (origin + 0.11, origin + 0.12, origin + 0.40)
        let disk = [(0.0, 0), (0.05, broken / 2), (0.105, broken), (0.115, appends ? broken : 0),
                    (0.3, appends ? broken + size / 2 : size / 2), (0.42, appends ? broken + size : size)]
        run.exchangeTimeline = ComparisonResults.ExchangeTimeline(
            origin: origin, faults: "drop:30pct,ignore-range", exchanges: exchanges,
            disk: disk.map { ComparisonResults.DiskSample(t: $0.0, bytes: $0.1) })
        return run
    }
}
