/// Each lesson's ways, for a lesson that shows more than one (`--way`). `LessonID.ways` says
/// whose they are.

/// Lesson 00. The two one-call ways, picked with `--way`.
public enum SmallFileWay: String, LessonWay {
    case completionHandler = "completion-handler"
    case contentsOf = "contents-of"

    public var summary: String {
        switch self {
        case .completionHandler: "URLSession data task; the handler gets the whole body at once"
        case .contentsOf: "Data(contentsOf:); the thread waits until the whole body is in memory"
        }
    }
}

/// Lesson 06. What `--way` picks: the cases around the download, or one case as the download.
public enum RunLoopThreadWay: String, LessonWay {
    case story
    case runLoop = "run-loop"
    case delegateQueue = "delegate-queue"
    case crowd

    public var summary: String {
        switch self {
        case .story: "cases a, c, d and e on 64 KiB slices, then the download as case b"
        case .runLoop: "case b only: the download, delivered by its thread's run loop"
        case .delegateQueue: "case c as the download: delivered on an OperationQueue, no run loop"
        case .crowd: "case e as the download: the file and one more transfer per core, all at once, each started the variant's way"
        }
    }
}

/// Lesson 07. How the corrected variant hands its body to URLSession, picked with `--way`. The article
/// variant has one way.
public enum MultipartUploadWay: String, LessonWay {
    case stream
    case bodyFile = "body-file"

    public var summary: String {
        switch self {
        case .stream: "the body as a stream: head, the file, tail, read in turn as URLSession asks; nothing copied"
        case .bodyFile: "the body written to a file first, then streamed from it"
        }
    }

    public static var variants: [Variant] { [.corrected] }
}

/// Lesson 08. How the corrected variant gets the body, picked with `--way`. The article variant has one way.
public enum AsyncAwaitWay: String, LessonWay {
    case chunks
    case byteByByte = "byte-by-byte"
    case pause
    case download

    public static let variants: [Variant] = [.corrected]

    public var summary: String {
        switch self {
        case .chunks: "LabKit's bodyChunks(for:), the body read chunk by chunk into a file; resumed with Range"
        case .byteByByte: "Apple's bytes(for:), the same body read one byte at a time (`for try await byte in bytes`)"
        case .pause: "the same, with a Pause button at 25%: a task group cancels the transfer, then it resumes"
        case .download: "download(for:) to a temporary file, then moved; no resume on Linux"
        }
    }
}
