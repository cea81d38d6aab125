import LabVocabulary
import Testing

/// The suites whose URLSession transfers run inside the test process, one suite at a time.
///
/// On Linux every URLSession's work queue targets one shared serial queue. While a `BodyChunks`
/// holds back a sender whose reader has not been scheduled yet, that queue waits, and no other
/// session in the process moves. A synchronous test that waits for one (the URLConnection tests)
/// would then hold a Swift concurrency thread that the reader may need: neither would move.
@Suite(.serialized) enum InProcessTransfers {}
