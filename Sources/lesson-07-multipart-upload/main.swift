/// Lesson 07: a multipart/form-data upload built by hand, with upload progress.
///
/// Follows section 5 of "网络篇 - 03.NSURLConnection应用场景": the request names a boundary in its
/// Content-Type, and the body is assembled piece by piece: a delimiter line, the file part's
/// headers, the file's bytes, a text field, the closing delimiter. Progress comes from
/// `didSendBodyData`, the session-era name of the callback that "IOS如何根据URL下载内容" offers
/// for estimating how far a POST has gone.
///
/// `ArticleUpload` keeps the article's body, defects included: the whole body sits in memory, the
/// file name goes into the header unescaped, and one CRLF too many follows the file's bytes, so
/// the server receives the file two bytes longer. `CorrectedUpload` sends a correct body without
/// holding the file in memory, in one of two ways (`--way`): read as a stream, part after part
/// (the default), or written to a body file first and streamed from it.
/// Read Lessons/07-multipart-upload.md next to this file.
import EmbeddedServer
import LabHarness
import LabKit
import LabVocabulary

Lesson(.multipartUpload, ways: MultipartUploadWay.self).run { run, way in
    switch run.variant {
    case .article: articleVariant(run)
    case .corrected: correctedVariant(run, way)
    }
}
