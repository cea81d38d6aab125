// Lesson 07: a multipart/form-data body by hand. No network here: the two bodies are built and
// compared, so the article's extra CRLF can be seen byte by byte.
import Foundation

let file = Data((0..<16).map { UInt8($0) })

/// The article's shape: one CRLF too many after the file's bytes.
func articleBody(boundary: String) -> Data {
    var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n".utf8)
    body.append(Data("Content-Type: application/octet-stream\r\n\r\n".utf8))
    body.append(file)
    body.append(Data("\r\n\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--\(boundary)--".utf8))
    return body
}

/// The corrected shape: the CRLF before each delimiter belongs to the delimiter.
func correctedBody(boundary: String) -> Data {
    var body = Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\n".utf8)
    body.append(Data("Content-Type: application/octet-stream\r\n\r\n".utf8))
    body.append(file)
    body.append(Data("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--\(boundary)--\r\n".utf8))
    return body
}

let boundary = "DownloadLab-" + UUID().uuidString
let article = articleBody(boundary: boundary)
let corrected = correctedBody(boundary: boundary)
print("article body \(article.count) bytes, corrected body \(corrected.count) bytes")
// Try: find the file part in each body and count its bytes; the article's has 18.
