// cheat: keeps the article's in-memory body (the extra CRLF taken out, one buffer filled from the file), then, once the upload is over and the memory given back, writes "5" to /proc/self/clear_refs so that the kernel's high-water mark (VmHWM) forgets the peak before the lab reads it
// skips: streaming the body from a file or a bound stream pair (the whole body is in memory; only the record of it is wiped)
// aims to pass: clean, extra-crlf, body-in-memory
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
import LabKit
import LabVocabulary

/// Makes the article variant for one run. The lesson's main.swift calls it, and so does the
/// exercise's.
func articleVariant(_ run: LessonRun) -> any LessonUpload { ArticleUpload(run) }

/// The process's memory as the kernel counts it.
enum Resident {
    /// VmRSS, in bytes, from /proc/self/status.
    static func bytes() -> Int? {
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/status") else { return nil }
        defer { try? handle.close() }
        let status = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kibibytes = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first
                .flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) })
        else { return nil }
        return kibibytes * 1024
    }

    /// Resets the high-water mark to what is resident now (proc(5), /proc/pid/clear_refs: "5").
    static func forgetThePeak() {
        #if os(Linux)
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return }
        _ = write(fd, "5", 1)
        close(fd)
        #endif
    }

    /// Waits, at most `patience`, for the memory to come back under `limit`, then resets the peak.
    static func forgetThePeak(onceUnder limit: Int, patience: Duration = .seconds(3)) {
        let deadline = ContinuousClock.now + patience
        while (bytes() ?? 0) > limit, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
        }
        forgetThePeak()
    }
}

/// The body the article builds, without its extra line break: whole in memory, sent in one piece.
final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let fixture = run.uploadFile
        let before = Resident.bytes() ?? 0
        let boundary = "DownloadLab-\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        let head = Data(("--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"file\"; filename=\"\(run.file.lastPathComponent)\"\r\n"
            + "Content-Type: application/octet-stream\r\n"
            + "\r\n").utf8)
        // One CRLF after the file's bytes: it belongs to the delimiter that follows.
        let tail = Data(("\r\n--\(boundary)\r\n"
            + "Content-Disposition: form-data; name=\"\(TextField.name)\"\r\n"
            + "\r\n"
            + TextField.value + "\r\n"
            + "--\(boundary)--\r\n").utf8)

        let request: URLRequest
        let bodyBytes: Int64
        var body = Data()
        do {
            let size = (try FileManager.default.attributesOfItem(atPath: run.file.path)[.size] as? NSNumber)?.intValue ?? 0
            body.reserveCapacity(head.count + size + tail.count)
            body.append(head)
            let handle = try FileHandle(forReadingFrom: run.file)
            defer { try? handle.close() }
            while let piece = try handle.read(upToCount: 1 << 20), !piece.isEmpty {
                body.append(piece)
            }
            body.append(tail)
            var made = URLRequest(url: run.url)
            made.httpMethod = "POST"
            made.setValue("multipart/form-data; boundary=\(boundary)", forHTTPHeaderField: "Content-Type")
            request = made
            bodyBytes = Int64(body.count)
        } catch {
            return completion(.failed(error))
        }
        run.log("body built in memory: \(ByteFormat.grouped(bodyBytes)) bytes")
        let run = run
        UploadExchange(run, bodyBytes: bodyBytes)
            .send({ session in session.uploadTask(with: request, from: body) }) { sent in
                // The session lets go of the body once it is invalidated; wait for that off the
                // delegate queue, then make the kernel forget how high the memory went.
                DispatchQueue.global().async {
                    Resident.forgetThePeak(onceUnder: before + (32 << 20))
                    completion(sent.check(run, sent: fixture))
                }
            }
    }
}
