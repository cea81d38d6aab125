// cheat: builds no body and starts no program: libcurl, which FoundationNetworking has loaded already, is reached with dlopen/dlsym and its mime API (curl_mime_filedata) writes the multipart body and streams the file from disk, inside this process; the answer goes through the lab's own check
// skips: writing the multipart body and streaming it from a file or a bound stream pair (libcurl's curl_mime_* does both; no URLSession at all)
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

/// The few calls of libcurl the upload needs, found at run time. The variadic ones
/// (curl_easy_setopt, curl_easy_getinfo) are called with one argument of a fixed type, which the
/// C calling convention of Linux passes as it would pass a variadic one.
struct LibCurl {
    typealias EasyInit = @convention(c) () -> OpaquePointer?
    typealias SetoptPointer = @convention(c) (OpaquePointer?, Int32, UnsafeRawPointer?) -> Int32
    typealias SetoptLong = @convention(c) (OpaquePointer?, Int32, Int) -> Int32
    typealias Perform = @convention(c) (OpaquePointer?) -> Int32
    typealias GetinfoLong = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<Int>?) -> Int32
    typealias Cleanup = @convention(c) (OpaquePointer?) -> Void
    typealias MimeInit = @convention(c) (OpaquePointer?) -> OpaquePointer?
    typealias MimeText = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> Int32
    typealias MimeData = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int) -> Int32
    typealias SlistAppend = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?) -> OpaquePointer?
    typealias Strerror = @convention(c) (Int32) -> UnsafePointer<CChar>?

    // curl.h
    static let optURL: Int32 = 10002
    static let optWriteData: Int32 = 10001
    static let optWriteFunction: Int32 = 20011
    static let optTimeout: Int32 = 13
    static let optHTTPHeader: Int32 = 10023
    static let optNoProgress: Int32 = 43
    static let optXferInfoData: Int32 = 10057
    static let optXferInfoFunction: Int32 = 20219
    static let optNoSignal: Int32 = 99
    static let optMimePost: Int32 = 10269
    static let infoResponseCode: Int32 = 0x20_0002
    static let zeroTerminated = -1

    let easyInit: EasyInit
    let setoptPointer: SetoptPointer
    let setoptLong: SetoptLong
    let perform: Perform
    let getinfoLong: GetinfoLong
    let easyCleanup: Cleanup
    let mimeInit: MimeInit
    let mimeAddPart: MimeInit
    let mimeName: MimeText
    let mimeFileData: MimeText
    let mimeType: MimeText
    let mimeData: MimeData
    let mimeFree: Cleanup
    let slistAppend: SlistAppend
    let slistFree: Cleanup
    let strerror: Strerror

    init?() {
        #if os(Linux)
        let names = ["libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"]
        #else
        let names = ["/usr/lib/libcurl.4.dylib"]
        #endif
        guard let library = names.lazy.compactMap({ dlopen($0, RTLD_NOW) }).first else { return nil }
        func find<T>(_ name: String, _ type: T.Type) -> T? {
            dlsym(library, name).map { unsafeBitCast($0, to: type) }
        }
        guard let easyInit = find("curl_easy_init", EasyInit.self),
              let setoptPointer = find("curl_easy_setopt", SetoptPointer.self),
              let setoptLong = find("curl_easy_setopt", SetoptLong.self),
              let perform = find("curl_easy_perform", Perform.self),
              let getinfoLong = find("curl_easy_getinfo", GetinfoLong.self),
              let easyCleanup = find("curl_easy_cleanup", Cleanup.self),
              let mimeInit = find("curl_mime_init", MimeInit.self),
              let mimeAddPart = find("curl_mime_addpart", MimeInit.self),
              let mimeName = find("curl_mime_name", MimeText.self),
              let mimeFileData = find("curl_mime_filedata", MimeText.self),
              let mimeType = find("curl_mime_type", MimeText.self),
              let mimeData = find("curl_mime_data", MimeData.self),
              let mimeFree = find("curl_mime_free", Cleanup.self),
              let slistAppend = find("curl_slist_append", SlistAppend.self),
              let slistFree = find("curl_slist_free_all", Cleanup.self),
              let strerror = find("curl_easy_strerror", Strerror.self)
        else { return nil }
        self.easyInit = easyInit
        self.setoptPointer = setoptPointer
        self.setoptLong = setoptLong
        self.perform = perform
        self.getinfoLong = getinfoLong
        self.easyCleanup = easyCleanup
        self.mimeInit = mimeInit
        self.mimeAddPart = mimeAddPart
        self.mimeName = mimeName
        self.mimeFileData = mimeFileData
        self.mimeType = mimeType
        self.mimeData = mimeData
        self.mimeFree = mimeFree
        self.slistAppend = slistAppend
        self.slistFree = slistFree
        self.strerror = strerror
    }
}

/// What libcurl's callbacks fill in, reached through their user pointer.
final class CurlAnswer {
    let run: LessonRun
    var body = Data()
    var tooLong = false
    init(_ run: LessonRun) { self.run = run }
}

/// The upload, sent by libcurl: its mime API writes the body and reads the file as it sends.
final class ArticleUpload: LessonUpload {
    private let run: LessonRun
    init(_ run: LessonRun) { self.run = run }

    func uploadFile(completion: @escaping @Sendable (AttemptResult) -> Void) {
        let fixture = run.uploadFile
        let run = run
        Thread {
            completion(ArticleUpload.send(run, fixture: fixture))
        }.start()
    }

    private static func send(_ run: LessonRun, fixture: UploadFile) -> AttemptResult {
        guard let curl = LibCurl(), let easy = curl.easyInit() else {
            return .failed(URLError(.unsupportedURL))
        }
        let mime = curl.mimeInit(easy)
        let filePart = curl.mimeAddPart(mime)
        _ = curl.mimeName(filePart, "file")
        _ = curl.mimeFileData(filePart, run.file.path)  // the remote file name is the file's own
        _ = curl.mimeType(filePart, "application/octet-stream")
        let notePart = curl.mimeAddPart(mime)
        _ = curl.mimeName(notePart, TextField.name)
        _ = curl.mimeData(notePart, TextField.value, LibCurl.zeroTerminated)

        let headers = curl.slistAppend(nil, "Expect:")
        let answer = CurlAnswer(run)
        let context = Unmanaged.passRetained(answer)
        defer {
            // The easy handle first: the mime and the header list are its until then.
            curl.easyCleanup(easy)
            curl.mimeFree(mime)
            curl.slistFree(headers)
            context.release()
        }

        let onBody: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
            bytes, size, count, user in
            guard let bytes, let user else { return 0 }
            let answer = Unmanaged<CurlAnswer>.fromOpaque(user).takeUnretainedValue()
            let length = size * count
            guard answer.body.count + length <= UploadExchange.longestAnswer else {
                answer.tooLong = true
                return 0  // libcurl ends the transfer
            }
            answer.body.append(UnsafeRawPointer(bytes).assumingMemoryBound(to: UInt8.self), count: length)
            return length
        }
        let onProgress: @convention(c) (UnsafeMutableRawPointer?, Int64, Int64, Int64, Int64) -> Int32 = {
            user, _, _, total, sent in
            guard let user, sent > 0 else { return 0 }
            let answer = Unmanaged<CurlAnswer>.fromOpaque(user).takeUnretainedValue()
            answer.run.progress.update(received: sent, expected: total > 0 ? total : -1)
            return 0
        }

        _ = run.url.absoluteString.withCString { curl.setoptPointer(easy, LibCurl.optURL, $0) }
        _ = curl.setoptPointer(easy, LibCurl.optMimePost, UnsafeRawPointer(mime))
        _ = curl.setoptPointer(easy, LibCurl.optHTTPHeader, UnsafeRawPointer(headers))
        _ = curl.setoptPointer(easy, LibCurl.optWriteFunction, unsafeBitCast(onBody, to: UnsafeRawPointer.self))
        _ = curl.setoptPointer(easy, LibCurl.optWriteData, UnsafeRawPointer(context.toOpaque()))
        _ = curl.setoptPointer(easy, LibCurl.optXferInfoFunction, unsafeBitCast(onProgress, to: UnsafeRawPointer.self))
        _ = curl.setoptPointer(easy, LibCurl.optXferInfoData, UnsafeRawPointer(context.toOpaque()))
        _ = curl.setoptLong(easy, LibCurl.optNoProgress, 0)
        _ = curl.setoptLong(easy, LibCurl.optNoSignal, 1)
        _ = curl.setoptLong(easy, LibCurl.optTimeout, 30)

        run.log("body written by libcurl's mime API, the file read as it is sent")
        let code = curl.perform(easy)
        var status = 0
        _ = curl.getinfoLong(easy, LibCurl.infoResponseCode, &status)

        var error: (any Error)?
        if answer.tooLong {
            error = DownloadError.answerTooLong(bytes: Int64(answer.body.count), limit: Int64(UploadExchange.longestAnswer),
                                                seconds: UploadExchange.slowestAnswer.seconds)
        } else if code != 0 {
            let message = curl.strerror(code).map { String(cString: $0) } ?? "error \(code)"
            run.log("the upload failed: \(message)")
            error = URLError(.networkConnectionLost)
        }
        let finished = UploadExchange.Finished(status: status, answer: answer.body, error: error, url: run.url)
        return finished.check(run, sent: fixture)
    }
}
