import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import LabKit
import Synchronization
import Testing

/// The inspector between a session and a lesson's delegate passes on what the delegate decides.
struct InspectedSessionTests {
    /// Keeps a proposed response with the date it was stored, as the URL Loading System guide's
    /// listing does, and says so.
    final class DatingDelegate: NSObject, URLSessionDataDelegate, Sendable {
        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
            completionHandler(CachedURLResponse(response: proposedResponse.response, data: proposedResponse.data,
                                                userInfo: ["stored": "by the lesson"], storagePolicy: .allowedInMemoryOnly))
        }
    }

    @Test func theLessonsDelegateDecidesWhatIsCached() throws {
        let session = URLSession(configuration: .ephemeral)
        defer { session.invalidateAndCancel() }
        let url = URL(string: "http://127.0.0.1:9/never-sent")!
        let task = session.dataTask(with: url)
        let proposed = CachedURLResponse(response: URLResponse(url: url, mimeType: nil, expectedContentLength: 3, textEncodingName: nil),
                                         data: Data([1, 2, 3]))
        let inspected = try #require(inspecting(DatingDelegate(), recordingIn: HTTPExchangeLog()) as? any URLSessionDataDelegate)
        let answer = Mutex<CachedURLResponse??>(nil)
        // Typed optional: on Apple's systems the method is an optional requirement, on Linux a plain one.
        let willCache: ((URLSession, URLSessionDataTask, CachedURLResponse, @escaping @Sendable (CachedURLResponse?) -> Void) -> Void)?
            = inspected.urlSession(_:dataTask:willCacheResponse:completionHandler:)
        let call = try #require(willCache)
        call(session, task, proposed) { response in answer.withLock { $0 = .some(response) } }
        let stored = try #require(answer.withLock { $0 } ?? nil)
        #expect(stored.userInfo?["stored"] as? String == "by the lesson" && stored.storagePolicy == .allowedInMemoryOnly)
    }
}
