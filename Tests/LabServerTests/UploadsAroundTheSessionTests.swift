import LabServer
import LabVocabulary
import Testing

/// An upload the server received and the run's session never sent: how exercise 07 tells code that
/// sent its body some other way (libcurl in the process, a program that is not its child).
struct UploadsAroundTheSessionTests {
    static func received(_ method: RequestMethod, bodyBytes: Int64 = 0) -> LoggedRequest {
        LoggedRequest(method: method, target: "/upload?run=t", range: nil, ifRange: nil, status: 200, bodyBytesSent: 40,
                      attempt: 0, requestBodyBytes: bodyBytes)
    }

    static func sent(_ method: RequestMethod) -> HTTPExchange {
        HTTPExchange(method: method, url: "http://127.0.0.1/upload")
    }

    @Test func anUploadTheSessionSentIsNotCounted() {
        #expect([Self.received(.post, bodyBytes: 1 << 20)].uploadsNotIn([Self.sent(.post)]) == 0)
    }

    @Test func anUploadTheRecordLacksIsCounted() {
        #expect([Self.received(.post, bodyBytes: 1 << 20)].uploadsNotIn([]) == 1)
        // A second one sent around the session, beside one sent through it.
        #expect([Self.received(.post, bodyBytes: 10), Self.received(.post, bodyBytes: 10)].uploadsNotIn([Self.sent(.post)]) == 1)
        // Another method with a body, and a GET that carried one.
        #expect([Self.received(RequestMethod(rawValue: "PUT")), Self.received(.get, bodyBytes: 5)].uploadsNotIn([]) == 2)
    }

    @Test func requestsWithoutABodyAreNotUploads() {
        // Lesson 11's HEAD, which the inspector does not hear on Linux, is no upload.
        #expect([Self.received(.head), Self.received(.get)].uploadsNotIn([]) == 0)
        // An exchange the record has and the server never saw takes nothing from the count.
        #expect([Self.received(.post, bodyBytes: 3)].uploadsNotIn([Self.sent(.post), Self.sent(.post)]) == 0)
    }
}
