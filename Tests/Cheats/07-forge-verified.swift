// cheat: never sends the file: it posts only the text field, then reports its own verdict with run.verified(_:), the file's SHA-256 and size given as both what was sent and what "the server received"
// skips: building a correct multipart body (one CRLF before each delimiter) and streaming it from disk instead of holding it in memory
// aims to pass: clean, extra-crlf, body-in-memory
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonUpload { ArticleUpload(run) }

/// A body with the note alone; the verdict is written here, not read from the server.
final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let run = run
        let size = PartialFile.size(of: run.file)
        guard let digest = CheatSHA256.hex(ofFileAt: run.file) else {
            return completion(.failed(DownloadError.cannotRead(path: run.file.path, reason: "cannot open it")))
        }
        let boundary = "DownloadLab-\(UUID().uuidString)"
        let text = "--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"\(TextField.name)\"\r\n\r\n"
            + "\(TextField.value)\r\n"
            + "--\(boundary)--\r\n"
        let body = Data(text.utf8)
        var request = URLRequest(url: run.url)
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
        run.log("body built in memory: \(ByteFormat.grouped(Int64(body.count))) bytes")
        UploadExchange(run, bodyBytes: Int64(body.count))
            .send({ session in session.uploadTask(with: request, from: body) }) { _ in
                run.verified(TransferCheck(expectedSHA256: digest, expectedBytes: size, actualSHA256: digest, actualBytes: size,
                                           actualSide: "the server received \"file\" as"))
                completion(.finished)
            }
    }
}

/// SHA-256 written out (FIPS 180-4), so the file can be checked against the server's Repr-Digest.
final class CheatSHA256 {
    private static let constants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
    private let w = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
    private let k = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
    private var h0: UInt32 = 0x6a09e667
    private var h1: UInt32 = 0xbb67ae85
    private var h2: UInt32 = 0x3c6ef372
    private var h3: UInt32 = 0xa54ff53a
    private var h4: UInt32 = 0x510e527f
    private var h5: UInt32 = 0x9b05688c
    private var h6: UInt32 = 0x1f83d9ab
    private var h7: UInt32 = 0x5be0cd19
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    init() {
        w.initialize(repeating: 0, count: 64)
        k.initialize(from: CheatSHA256.constants, count: 64)
    }

    deinit {
        w.deallocate()
        k.deallocate()
    }

    func update(_ data: Data) {
        length &+= UInt64(data.count)
        pending.append(contentsOf: data)
        let whole = pending.count / 64 * 64
        if whole == 0 { return }
        pending.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < whole {
                compress(base + offset)
                offset += 64
            }
        }
        pending.removeFirst(whole)
    }

    /// The digest as lowercase hex, as LabKit's `reprDigestSHA256` gives the server's.
    func finish() -> String {
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        let bits = length &* 8
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bits &>> UInt64(shift)))
        }
        tail.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                compress(base + offset)
                offset += 64
            }
        }
        return [h0, h1, h2, h3, h4, h5, h6, h7].map { String(format: "%08x", $0) }.joined()
    }

    private func compress(_ block: UnsafePointer<UInt8>) {
        for i in 0..<16 {
            let b0 = UInt32(block[4 * i]) &<< 24
            let b1 = UInt32(block[4 * i + 1]) &<< 16
            let b2 = UInt32(block[4 * i + 2]) &<< 8
            let b3 = UInt32(block[4 * i + 3])
            w[i] = b0 | b1 | b2 | b3
        }
        for i in 16..<64 {
            let x = w[i - 15]
            let y = w[i - 2]
            let s0 = (x &>> 7 | x &<< 25) ^ (x &>> 18 | x &<< 14) ^ (x &>> 3)
            let s1 = (y &>> 17 | y &<< 15) ^ (y &>> 19 | y &<< 13) ^ (y &>> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
        for i in 0..<64 {
            let bigS1 = (e &>> 6 | e &<< 26) ^ (e &>> 11 | e &<< 21) ^ (e &>> 25 | e &<< 7)
            let choice = (e & f) ^ (~e & g)
            let t1 = h &+ bigS1 &+ choice &+ k[i] &+ w[i]
            let bigS0 = (a &>> 2 | a &<< 30) ^ (a &>> 13 | a &<< 19) ^ (a &>> 22 | a &<< 10)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = bigS0 &+ majority
            h = g
            g = f
            f = e
            e = d &+ t1
            d = c
            c = b
            b = a
            a = t1 &+ t2
        }
        h0 = h0 &+ a
        h1 = h1 &+ b
        h2 = h2 &+ c
        h3 = h3 &+ d
        h4 = h4 &+ e
        h5 = h5 &+ f
        h6 = h6 &+ g
        h7 = h7 &+ h
    }

    /// The SHA-256 of the file at `url`, read 1 MiB at a time; nil when it cannot be read.
    static func hex(ofFileAt url: URL) -> String? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        let hasher = CheatSHA256()
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(chunk)
        }
        return hasher.finish()
    }
}
