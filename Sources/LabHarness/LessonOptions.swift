import ArgumentParser
import Foundation
import LabKit
import LabFixtures
import LabVocabulary

extension Variant: ExpressibleByArgument {}

/// The command line every lesson shares.
struct LessonOptions: ParsableArguments {
    @Option(help: "Download from this URL instead of the embedded server (any HTTP server, e.g. nginx).")
    var url: String?

    @Option(help: "The SHA-256 (hex) the complete file must have. Default: the digest the server publishes.")
    var sha256: String?

    @Option(help: "Where to write the file. A partial file already there is resumed. Default: a fresh file in the temporary directory.")
    var output: String?

    @Option(help: "article: the article's logic, defects included. corrected: the fixed version.")
    var variant: Variant = .corrected

    @Flag(help: "Print one JSON result object on stdout; the story goes to stderr.")
    var json = false

    @Flag(help: "Print only errors (and the JSON record with --json).")
    var quiet = false

    @Option(help: ArgumentHelp("Also write the run's exchanges as an HTTP Archive (HAR 1.2), for a browser's network panel, Charles or Proxyman.", valueName: "file"))
    var har: String?

    @Option(name: .customLong("write-delay-us"), help: "Simulate a slow disk: sleep this many microseconds after every write.")
    var writeDelayMicroseconds = 0

    @Option(name: .customLong("disk-full-after"), help: "Simulate a disk that fills up after this many bytes (e.g. 10MiB).", transform: ByteSize.init(parsing:))
    var diskFullAfter: ByteSize?

    @Option(help: "Size of the embedded server's file (for an upload lesson: of the file sent), e.g. 64MiB or 1GiB.", transform: ByteSize.init(parsing:))
    var size: ByteSize?

    @Option(help: "Faults the embedded server injects, one entry per attempt, e.g. \"drop:40pct,ok\". `lab serve` lists them.", transform: FaultScript.init(parsing:))
    var faults: FaultScript?

    @Option(help: "Lesson 09: what happens to the app while it downloads, e.g. \"suspend@20%,terminate@50%\" (its default); \"\" for nothing. Events: \(LifeScript.syntax).", transform: LifeScript.init(parsing:))
    var life: LifeScript?

    @Flag(name: .customLong("slow-events"), help: "Lesson 09: a launch for background events gets its events \(Int(BackgroundRun.slowEventsSeconds)) s after it starts, as a busy phone hands them over.")
    var slowEvents = false

    @Flag(name: .customLong("purge-caches"), help: "Lesson 10: between the two launches, empty the app's Library/Caches and tmp, as iOS does when storage runs low.")
    var purgeCaches = false

    // Unconditional: "-1" is a value to refuse by its range, not an option that is missing.
    @Option(parsing: .unconditional, help: "Lesson 11: how many segments, each on its own connection at once (1 is a single stream).")
    var connections: Int?

    @Option(help: "Stop after this many attempts (each one is a press of Start or Resume).")
    var maxAttempts = TransferLimits.defaultAttempts

    @Option(name: .customLong("max-time"), help: "Give up once the whole run has taken this many seconds (as curl's --max-time). The partial file stays.")
    var maxTime: Double?

    @Option(name: .customLong("max-filesize"), help: "Give up when one response announces or brings more than this, e.g. 1GiB (as curl's --max-filesize).", transform: ByteSize.init(parsing:))
    var maxFilesize: ByteSize?

    @Option(name: .customLong("idle-timeout"), help: "End an attempt when nothing has arrived for this many seconds (URLSession's timeoutIntervalForRequest); the next attempt resumes.")
    var idleTimeout = Int(TransferLimits.defaultIdleSeconds)

    /// The limits these options set.
    var limits: TransferLimits {
        TransferLimits(maxSeconds: maxTime, maxFileSize: maxFilesize?.bytes,
                       idleSeconds: Double(idleTimeout))
    }

    mutating func validate() throws {
        if let url {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
                  parsed.host?.isEmpty == false
            else { throw ValidationError("--url must be an http:// or https:// URL with a host, got \"\(ShownURL.brief(url))\"") }
        }
        if let sha256 {
            let hex = sha256.lowercased()
            guard hex.count == 64, hex.allSatisfy({ $0.isHexDigit }) else {
                throw ValidationError("--sha256 must be 64 hexadecimal digits, got \"\(sha256)\"")
            }
            self.sha256 = hex
        }
        guard (0...1_000_000).contains(writeDelayMicroseconds) else {
            throw ValidationError("--write-delay-us must be between 0 and 1000000")
        }
        guard (1...100).contains(maxAttempts) else {
            throw ValidationError("--max-attempts must be between 1 and 100")
        }
        if let maxTime {
            guard maxTime.isFinite, maxTime > 0, maxTime <= 86_400 else {
                throw ValidationError("--max-time must be a number of seconds above 0 and at most 86400")
            }
        }
        // Whole seconds: Foundation on Linux keeps only the whole part of the interval.
        guard (1...3_600).contains(idleTimeout) else {
            throw ValidationError("--idle-timeout must be a whole number of seconds from 1 to 3600")
        }
        if har?.isEmpty == true { throw ValidationError("--har needs the path of the file to write") }
        if let maxFilesize, maxFilesize.bytes <= 0 {
            throw ValidationError("--max-filesize must be above 0")
        }
        if let size, size.bytes > Fixture.maximumSize {
            throw ValidationError("--size: \(size) is larger than the largest fixture, \(ByteSize.format(Fixture.maximumSize))")
        }
        if let size, let faults {
            do { try faults.check(fixtureSize: size.bytes) } catch { throw ValidationError("--faults: \(error)") }
        }
    }
}
