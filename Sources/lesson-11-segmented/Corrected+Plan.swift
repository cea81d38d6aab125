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
    /// What `If-Range` sends back: the strong ETag, or else Last-Modified. nil for a server that
    /// sent neither: then nothing proves that two answers are of one version, the ranges go one
    /// after another, and only the final digest check can tell a file that changed meanwhile.
    var validator: String?
    var segments: [Segment]

    /// Bytes on disk, counted once whichever connection brought them.
    var done: Int64 { segments.reduce(0) { $0 + min($1.done, $1.length) } }
    var isComplete: Bool { segments.allSatisfy(\.isComplete) }
    /// With no validator, one range at a time: one stream, resumed where it stopped.
    var oneAtATime: Bool { validator == nil }

    /// The file split into `count` ranges after `firstRange` (the first answer's), each of about
    /// the same size and none smaller than `smallest` bytes, unless the file is.
    static func split(total: Int64, validator: String?, firstRange: Segment, into count: Int, smallest: Int64) -> SegmentPlan {
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
              let total = Int64(parts[1]), first >= 0, first <= last, last < total
        else { return nil }
        return (first, last, total)
    }

    /// Why this plan cannot be of a file of `size` bytes on disk, or nil when it can: its ranges
    /// must run from byte 0 to the last, one after another, each with no more done than it holds.
    /// A plan that does not fit is another version's, or not a plan at all; checked before any
    /// arithmetic, so that no number in it can overflow.
    func misfit(fileSize size: Int64) -> String? {
        guard total > 0, total == size else { return "it is for \(total) bytes, and the file has \(size)" }
        guard !segments.isEmpty, segments.count <= 1 << 10 else { return "it has \(segments.count) ranges" }
        var expected: Int64 = 0
        for segment in segments {
            guard segment.first == expected, segment.last >= segment.first, segment.last < total else {
                return "its ranges do not run one after another from byte 0 to \(total - 1)"
            }
            guard segment.done >= 0, segment.done <= segment.length else { return "a range has more done than it holds" }
            expected = segment.last + 1
        }
        return expected == total ? nil : "its ranges end at byte \(expected - 1), not \(total - 1)"
    }

    // MARK: The file beside the download

    static func file(beside download: URL) -> URL {
        download.deletingLastPathComponent().appendingPathComponent(download.lastPathComponent + ".segments")
    }

    /// What a relaunch finds beside `download`.
    enum Kept {
        case none
        case plan(SegmentPlan)
        /// A file that is no plan of this file's: it is left out, and the download starts over.
        case unusable(reason: String)
    }

    /// A plan is a few hundred bytes; anything longer is not one (and is never read whole).
    static let longestPlan = 64 << 10

    /// The plan kept beside `download`, when the file it describes is there at its full size.
    static func kept(beside download: URL) -> Kept {
        let url = file(beside: download)
        let manager = FileManager.default
        guard let kind = try? manager.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType else { return .none }
        guard kind == .typeRegular, let handle = try? FileHandle(forReadingFrom: url) else {
            return .unusable(reason: "\(url.lastPathComponent) is not a regular file")
        }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: longestPlan + 1) ?? Data(), data.count <= longestPlan else {
            return .unusable(reason: "\(url.lastPathComponent) is longer than a plan can be")
        }
        guard let plan = try? JSONDecoder().decode(SegmentPlan.self, from: data) else {
            return .unusable(reason: "\(url.lastPathComponent) is not a plan")
        }
        let size = (try? manager.attributesOfItem(atPath: download.path)[.size] as? NSNumber)?.int64Value ?? -1
        if let misfit = plan.misfit(fileSize: size) { return .unusable(reason: "\(url.lastPathComponent) does not fit the file: \(misfit)") }
        return .plan(plan)
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
        for url in [file(beside: download), nextFile(beside: download)] {
            // A folder or a link planted there is not the plan's to delete.
            guard (try? FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType) == .typeRegular else { continue }
            try? FileManager.default.removeItem(at: url)
        }
    }
}

/// Why the plan could not be written beside the file, in words a person reads.
struct PlanNotKept: LocalizedError {
    let errorDescription: String?
}
