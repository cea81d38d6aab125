import LabFixtures

/// Whether a GET or HEAD may be answered 304 Not Modified: the client's copy is the server's
/// current representation (RFC 9110 §13.1.2, §13.1.3, and the order of §13.2.2).
///
/// - `If-None-Match` decides when it is there: `*`, or a listed tag equal to the current ETag
///   under the weak comparison (`W/"x"` and `"x"` are the same tag for it).
/// - Only without `If-None-Match`, `If-Modified-Since` decides: a valid HTTP-date at or after
///   `Last-Modified`. An invalid date, or more than one, is ignored.
///
/// nginx (1.22) differs in two ways, which `ConditionalAgainstNginxTests` holds to: by default
/// (`if_modified_since exact`) only an equal date is "not modified", and with both headers it
/// answers 304 only when both say so.
enum ConditionalRequest {
    static func notModified(ifNoneMatch: [String], ifModifiedSince: [String], etag: String, lastModified: String) -> Bool {
        if !ifNoneMatch.isEmpty {
            return ifNoneMatch.contains { field in
                field.trimmingOWS == "*" || EntityTags.parse(field).contains { EntityTags.opaque($0) == EntityTags.opaque(etag) }
            }
        }
        guard ifModifiedSince.count == 1, let since = HTTPDate.parse(ifModifiedSince[0].trimmingOWS),
              let modified = HTTPDate.parse(lastModified) else { return false }
        return modified <= since
    }
}

/// A list of entity-tags (RFC 9110 §8.8.3): `"a", W/"b"`. A tag's characters may include a comma,
/// so the list is read tag by tag, not split; reading stops at the first thing that is not a tag.
enum EntityTags {
    static func parse(_ field: String) -> [String] {
        var tags: [String] = []
        var rest = Substring(field)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            guard !rest.isEmpty else { return tags }
            let weak = rest.hasPrefix("W/")
            let quoted = weak ? rest.dropFirst(2) : rest
            guard quoted.first == "\"", let close = quoted.dropFirst().firstIndex(of: "\"") else { return tags }
            let end = quoted.index(after: close)
            tags.append(String(rest[rest.startIndex..<end]))
            rest = rest[end...]
        }
    }

    /// The tag without its weakness, for the weak comparison: `W/"x"` → `"x"`.
    static func opaque(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
    }
}

extension String {
    /// Without the optional whitespace (spaces and tabs) HTTP allows around a field value.
    var trimmingOWS: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
