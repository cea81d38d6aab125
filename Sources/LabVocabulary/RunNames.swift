/// How a run ended. A lesson's record says it (docs/running-a-lesson.md); `lab compare` and
/// `lab exercise` say `crashed` for a process that printed no record.
public enum Outcome: String, Codable, Sendable, CaseIterable, LabName {
    case verified
    /// There was no digest to compare the file with.
    case unverified
    /// The lesson said it was done, and the file is wrong.
    case verificationFailed = "verification-failed"
    case transferFailed = "transfer-failed"
    case ioFailed = "io-failed"
    /// A file the lesson reads (lesson 05's resume data) is unusable; nothing was touched.
    case badInput = "bad-input"
    /// The app froze (lesson 06's `--way crowd`).
    case unresponsive
    /// The code broke a rule of the API, which Apple's answers with an exception (lesson 09).
    case misuse
    /// The run took longer than `--max-time` (or the lab's own limit) and ended there.
    case timedOut = "timed-out"
    /// The process ended without a record: a crash, or a kill from outside.
    case crashed
}

/// A yardstick `lab compare` measures beside the lessons.
public enum ReferenceKind: String, Codable, Sendable, CaseIterable, LabName {
    case curl
    case wget
    /// A bare URLSession download, paired with each corrected download.
    case foundationFloor = "foundation-floor"
    /// `curl -F`, paired with each corrected upload.
    case formUpload = "curl-form"
    /// curl to /dev/null: the server and loopback, no disk.
    case loopbackLimit = "loopback-limit"
    /// `foundation-floor --write` into the lessons' folder: the disk alone.
    case diskLimit = "disk-limit"
}

/// How the lesson executables were built.
public enum BuildConfiguration: String, Codable, Sendable, CaseIterable, LabName {
    case debug
    case release
}

/// Where `lab compare` fetched from: a LabServer inside it, or another server (`--server`).
public enum ServerKind: String, Codable, Sendable, CaseIterable, LabName {
    case embedded
    case external
}

/// Which of `lab compare`'s presets ran; `custom` when options changed one.
public enum Preset: String, Codable, Sendable, CaseIterable, LabName {
    case `default`
    case quick
    case full
    case custom
}

/// An HTTP request method, as the lab's logs record it. The wire spells it in upper case.
public struct RequestMethod: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let get = RequestMethod(rawValue: "GET")
    public static let head = RequestMethod(rawValue: "HEAD")
    public static let post = RequestMethod(rawValue: "POST")

    public var description: String { rawValue }
}
