/// Lesson 11, the corrected variant's plan, the rest of Corrected.swift.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which byte ranges make up the file, how much of each is on disk, and which version of the
/// file they belong to. Kept beside the file as JSON, so a relaunch after a kill asks only for
/// what is missing.
struct SegmentPlan: Codable, Equatable {
    /// One byte range of the file, `first...last`, and how many of its bytes are on disk, from
    /// `first` on.
    struct Segment: Codable, Equatable {
        var first: Int64
        var last: Int64
        var done: Int64 = 0

        var length: Int64 { last - first + 1 }
        var isComplete: Bool { done >= length }
        /// The next byte to ask for.
        var next: Int64 { first + done }
    }

    /// The whole file's size, from the first answer's Content-Range.
    var total: Int64
    /// What `If-Range` sends back: the strong ETag, or else Last-Modified.
    var validator: String
    var segments: [Segment]

    /// Bytes on disk, counted once whichever connection brought them.
    var done: Int64 { segments.reduce(0) { $0 + min($1.done, $1.length) } }
    var isComplete: Bool { segments.allSatisfy(\.isComplete) }

    /// The file split into `count` ranges after `firstRange` (the first answer's), each of about
    /// the same size and none smaller than `smallest` bytes, unless the file is.
    static func split(total: Int64, validator: String, firstRange: Segment, into count: Int, smallest: Int64) -> SegmentPlan {
        var segments = [firstRange]
        let rest = total - firstRange.last - 1
        let pieces = max(1, min(Int64(count), rest / max(smallest, 1)))
        var first = firstRange.last + 1
        for index in 0..<pieces where rest > 0 {
            let last = index == pieces - 1 ? total - 1 : first + rest / pieces - 1
            segments.append(Segment(first: first, last: last))
            first = last + 1
        }
        return SegmentPlan(total: total, validator: validator, segments: segments)
    }

    /// The validator `If-Range` may carry: a strong ETag (RFC 9110 §13.1.5 refuses a weak
    /// one), else the Last-Modified date; nil when the server gave neither.
    static func validator(of response: HTTPURLResponse) -> String? {
        if let etag = response.value(forHTTPHeaderField: "ETag"), !etag.hasPrefix("W/") { return etag }
        return response.value(forHTTPHeaderField: "Last-Modified")
    }

    /// `bytes 0-1048575/67108864` → (0, 1048575, 67108864); nil for anything else, an unknown
    /// total (`/*`) included.
    static func rangeAnswered(by response: HTTPURLResponse) -> (first: Int64, last: Int64, total: Int64)? {
        guard let header = response.value(forHTTPHeaderField: "Content-Range"), header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst("bytes ".count).split(separator: "/")
        let bounds = parts.first?.split(separator: "-") ?? []
        guard parts.count == 2, bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]),
              let total = Int64(parts[1]), first <= last, last < total
        else { return nil }
        return (first, last, total)
    }

    // MARK: The file beside the download

    static func file(beside download: URL) -> URL {
        download.deletingLastPathComponent().appendingPathComponent(download.lastPathComponent + ".segments")
    }

    /// The plan kept beside `download`, when the file it describes is there at its full size.
    static func kept(beside download: URL) -> SegmentPlan? {
        guard let data = try? Data(contentsOf: file(beside: download)),
              let plan = try? JSONDecoder().decode(SegmentPlan.self, from: data),
              let size = (try? FileManager.default.attributesOfItem(atPath: download.path)[.size] as? NSNumber)?.int64Value,
              size == plan.total, plan.segments.allSatisfy({ $0.done >= 0 && $0.first <= $0.last + 1 })
        else { return nil }
        return plan
    }

    /// Written to a new file that then replaces the old one: a kill leaves one or the other.
    /// Not with `Data.write(to:)`, which ends in fsync(2): on Linux that waited for the download's
    /// own unwritten pages, stalled the delegate queue at every save, and with it every connection.
    func keep(beside download: URL) throws {
        let kept = Self.file(beside: download)
        let next = Self.nextFile(beside: download)
        guard FileManager.default.createFile(atPath: next.path, contents: nil) else {
            throw PlanNotKept(errorDescription: "cannot create \(next.path)")
        }
        let handle = try FileHandle(forWritingTo: next)
        defer { try? handle.close() }
        try handle.write(contentsOf: JSONEncoder().encode(self))
        guard rename(next.path, kept.path) == 0 else {
            throw PlanNotKept(errorDescription: "cannot rename \(next.lastPathComponent) to \(kept.lastPathComponent): \(String(cString: strerror(errno)))")
        }
    }

    private static func nextFile(beside download: URL) -> URL {
        download.deletingLastPathComponent().appendingPathComponent(download.lastPathComponent + ".segments.next")
    }

    static func forget(beside download: URL) {
        try? FileManager.default.removeItem(at: file(beside: download))
        try? FileManager.default.removeItem(at: nextFile(beside: download))
    }
}

/// Why the plan could not be written beside the file, in words a person reads.
struct PlanNotKept: LocalizedError {
    let errorDescription: String?
}
