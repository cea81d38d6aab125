import LabFixtures
import NIOHTTP1

extension RequestHandler {
    /// The head of a fixture's answer: what the body is, how long it says it is
    /// (`announcedLength`, a lie under the `length` fault), and the validators and range that
    /// let a client resume it.
    static func fixtureHeaders(_ fixture: Fixture, _ representation: Representation, faults: AttemptFaults,
                               announcedLength: Int64, hasBody: Bool) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if hasBody {
            headers.add(name: "Content-Type", value: fixture.content == .text ? "text/plain; charset=utf-8" : "application/octet-stream")
        }
        if case .gzip = representation {
            headers.add(name: "Content-Encoding", value: "gzip")
        }
        if faults.chunked {
            headers.add(name: "Transfer-Encoding", value: "chunked")
        } else {
            headers.add(name: "Content-Length", value: "\(announcedLength)")
        }
        if let name = faults.dispositionName {
            headers.add(name: "Content-Disposition", value: ContentDisposition.attachment(name))
        }
        var compressed = false
        if case .gzip = representation { compressed = true }
        headers.add(contentsOf: describing(fixture, compressed: compressed, faults: faults))
        switch representation {
        case .identity(let selection, let digest):
            switch selection {
            case .full: break
            case .partial(let first, let last): headers.add(name: "Content-Range", value: "bytes \(first)-\(last)/\(fixture.size)")
            case .unsatisfiable: headers.add(name: "Content-Range", value: "bytes */\(fixture.size)")
            }
            headers.add(name: "Accept-Ranges", value: "bytes")
            if let digest { headers.add(name: "Repr-Digest", value: DigestText.reprDigest(digest)) }
        case .gzip:
            // No Accept-Ranges, and no Repr-Digest: the representation is the encoded bytes, whose
            // digest the lab does not publish.
            break
        }
        return headers
    }

    /// nginx weakens the ETag of what it compresses: the encoded bytes are not the file's, so no
    /// If-Range may match them (RFC 9110 requires a strong validator).
    static func etag(of fixture: Fixture, compressed: Bool) -> String {
        compressed ? "W/" + fixture.etag : fixture.etag
    }

    /// The file's date; under `same-date` the one it had before it changed.
    static func lastModified(of fixture: Fixture, faults: AttemptFaults) -> String {
        faults.sameDate ? Fixture.lastModified(ofGeneration: max(0, fixture.generation - 1)) : fixture.lastModified
    }

    /// What describes the file on every answer about it, a 304 included (RFC 9110 §15.4.5): its
    /// validators, its Cache-Control, and Vary when the answer depends on Accept-Encoding.
    static func describing(_ fixture: Fixture, compressed: Bool, faults: AttemptFaults) -> [(String, String)] {
        var fields = faults.noValidators ? [] : [("ETag", etag(of: fixture, compressed: compressed)), ("Last-Modified", lastModified(of: fixture, faults: faults))]
        if let cacheControl = faults.cacheControl { fields.append(("Cache-Control", cacheControl)) }
        // The same URL answers differently by Accept-Encoding: a cache must key on it.
        if faults.gzip { fields.append(("Vary", "Accept-Encoding")) }
        return fields
    }
}
