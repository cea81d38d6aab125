import Crypto

/// The server's memory of its requests, bounded whatever the clients send: the newest
/// `maximumEntries` requests, and no more than `maximumBytes` of their text. Long fields are cut
/// when recorded (`LoggedRequest.trimmed()`), keeping the end of a target, where `run=<token>`
/// stands: `lab compare` and `lab exercise` find their runs by it, right after each run.
struct BoundedRequestLog {
    static let maximumEntries = 10_000
    static let maximumBytes = 8 << 20

    private var entries: [LoggedRequest] = []
    /// Entries dropped from the front so far: an entry's number minus this is its index.
    private var dropped = 0
    private var bytes = 0

    var all: [LoggedRequest] { entries }

    /// Records `entry` and returns its number, for `setBodyBytes`.
    mutating func append(_ entry: LoggedRequest) -> Int {
        let entry = entry.trimmed()
        entries.append(entry)
        bytes += entry.textBytes
        guard entries.count > Self.maximumEntries || bytes > Self.maximumBytes else {
            return dropped + entries.count - 1
        }
        // Trimmed to nine tenths of each bound, so the entries move once per thousand requests
        // and not on every one once the log is full.
        var excess = 0
        while entries.count - excess > Self.maximumEntries * 9 / 10 || bytes > Self.maximumBytes * 9 / 10 {
            bytes -= entries[excess].textBytes
            excess += 1
        }
        entries.removeFirst(excess)
        dropped += excess
        return dropped + entries.count - 1
    }

    /// Updates an entry that may already have been dropped.
    mutating func setBodyBytes(_ count: Int64, ofEntry number: Int, at time: Double) {
        let index = number - dropped
        guard entries.indices.contains(index) else { return }
        entries[index].bodyBytesSent = count
        entries[index].lastBodyBytesAt = time
    }

    /// Marks an entry, if it is still kept, as stalled.
    mutating func setStalled(ofEntry number: Int) {
        let index = number - dropped
        guard entries.indices.contains(index) else { return }
        entries[index].stalled = true
    }
}

/// The attempt counter of each fixture URL. A URL's counter is kept under the SHA-256 of its key,
/// so a 60 KB query costs 32 bytes, and only the `maximumURLs` most recently created are kept:
/// an older one starts again from attempt 1.
struct AttemptCounters {
    static let maximumURLs = 16_384

    private var counts: [SHA256Digest: Int] = [:]
    /// Keys in the order they were created, oldest from `oldest` on.
    private var order: [SHA256Digest] = []
    private var oldest = 0

    /// The attempt after the last one this URL played; counted only when `advancing`.
    mutating func next(for key: String, advancing: Bool) -> Int {
        let digest = SHA256.hash(data: Array(key.utf8))
        let next = counts[digest, default: 0] + 1
        guard advancing else { return next }
        if counts.updateValue(next, forKey: digest) == nil {
            order.append(digest)
            forgetOldest()
        }
        return next
    }

    private mutating func forgetOldest() {
        while counts.count > Self.maximumURLs {
            counts[order[oldest]] = nil
            oldest += 1
        }
        if oldest > Self.maximumURLs {
            order.removeFirst(oldest)
            oldest = 0
        }
    }
}

extension LoggedRequest {
    /// Fields longer than this are cut in the middle (targets) or at the end (headers, names).
    static let maximumTargetBytes = 2048
    static let maximumHeaderBytes = 256
    /// File parts after this many are not listed (their count and bytes are in the upload's answer).
    static let maximumFilesListed = 16

    /// The same entry with every field a client chose cut to its bound.
    func trimmed() -> LoggedRequest {
        var entry = self
        entry.target = Self.keepingEnds(target, maximumBytes: Self.maximumTargetBytes)
        entry.range = range.map { Self.keepingStart($0, maximumBytes: Self.maximumHeaderBytes) }
        entry.ifRange = ifRange.map { Self.keepingStart($0, maximumBytes: Self.maximumHeaderBytes) }
        entry.uploadedFiles = uploadedFiles.prefix(Self.maximumFilesListed).map { file in
            var file = file
            file.field = Self.keepingStart(file.field, maximumBytes: Self.maximumHeaderBytes)
            file.filename = Self.keepingStart(file.filename, maximumBytes: Self.maximumHeaderBytes)
            return file
        }
        return entry
    }

    /// Roughly what the entry's text holds in memory.
    var textBytes: Int {
        method.rawValue.utf8.count + target.utf8.count + (range?.utf8.count ?? 0) + (ifRange?.utf8.count ?? 0)
            + uploadedFiles.reduce(0) { $0 + $1.field.utf8.count + $1.filename.utf8.count + $1.sha256Hex.utf8.count }
            + 64
    }

    private static func keepingStart(_ text: String, maximumBytes: Int) -> String {
        guard text.utf8.count > maximumBytes else { return text }
        return String(decoding: text.utf8.prefix(maximumBytes), as: UTF8.self) + "…"
    }

    private static func keepingEnds(_ text: String, maximumBytes: Int) -> String {
        guard text.utf8.count > maximumBytes else { return text }
        let half = maximumBytes / 2
        return String(decoding: text.utf8.prefix(half), as: UTF8.self) + "…"
            + String(decoding: text.utf8.suffix(half), as: UTF8.self)
    }
}
