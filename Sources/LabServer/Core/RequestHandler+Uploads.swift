import LabFixtures
import LabVocabulary
import NIOCore
import NIOHTTP1

/// An upload to `/upload`: its body is parsed as it arrives (MultipartParser), and answered with
/// what arrived, or refused at once.
extension RequestHandler {
    func beginUpload(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        switch UploadEndpoint.boundary(of: head, limits: uploadLimits) {
        case .failure(let refusal):
            refuseUpload(refusal, request: head, context: context)
        case .success(let boundary):
            state = .receivingUpload(head, MultipartParser(boundary: boundary, limits: uploadLimits))
            // curl and URLSession wait for this before sending a large body.
            if head.headers.first(name: "Expect")?.lowercased() == "100-continue" {
                let interim = HTTPResponseHead(version: head.version, status: .continue)
                context.writeAndFlush(wrapOutboundOut(.head(interim)), promise: nil)
            }
        }
    }

    func finishUpload(_ parser: inout MultipartParser, request: HTTPRequestHead, context: ChannelHandlerContext) {
        do {
            let parts = try parser.finish()
            let files = parts.compactMap { part in
                part.filename.map { LoggedRequest.UploadedFile(field: part.name, filename: $0, bytes: part.bytes, sha256Hex: DigestText.hex(part.sha256)) }
            }
            sendText(.ok, UploadEndpoint.json(parts: parts, bodyBytes: parser.bodyBytes), contentType: "application/json",
                     requestBodyBytes: parser.bodyBytes, uploadedFiles: files, request: request, context: context)
        } catch {
            let refusal = RefusedUpload(error)
            sendText(refusal.status, refusal.reason, requestBodyBytes: parser.bodyBytes, request: request, context: context)
        }
    }

    /// Answers at once, before the rest of the body; the connection closes once the
    /// request has ended, since the client may not send the body it announced.
    func refuseUpload(_ refusal: RefusedUpload, request: HTTPRequestHead, context: ChannelHandlerContext) {
        let answered = sendText(refusal.status, refusal.reason, extraHeaders: request.isKeepAlive ? [("Connection", "close")] : [],
                 request: request, context: context)
        state = .refusingUpload(discarded: 0, answered: answered)
    }
}
