/// The faults of one attempt, sorted by what they affect: which response is chosen
/// (redirect, status, ignore-range, shift-range) and how its body is sent (`BodyPlan`).
import LabVocabulary
struct AttemptFaults {
    var drop: FaultScript.Offset?
    var bytesPerSecond: Int64?
    var stall: (offset: FaultScript.Offset, duration: Duration?)?
    var ignoreRange = false
    var statusCode: Int?
    var redirectHops: Int?
    var lengthError: Int64?
    var rangeShift: Int64?
    var chunked = false
    var dispositionName: String?
    var latency: Duration?

    init(_ faults: [FaultScript.Fault]) {
        for fault in faults {
            switch fault {
            case .drop(let offset): drop = offset
            case .throttle(let rate): bytesPerSecond = rate
            case .stall(let offset, let duration): stall = (offset, duration)
            case .ignoreRange: ignoreRange = true
            case .change: break // already counted in the generation
            case .status(let code): statusCode = code
            case .redirect(let hops): redirectHops = hops
            case .badLength(let delta): lengthError = delta
            case .shiftRange(let offset): rangeShift = offset
            case .chunked: chunked = true
            case .disposition(let filename): dispositionName = filename
            case .latency(let duration): latency = duration
            }
        }
    }

    func bodyPlan(bodyLength: Int64) -> BodyPlan {
        BodyPlan(
            dropAfter: drop?.resolved(bodyLength: bodyLength),
            stallAt: stall.map { $0.offset.resolved(bodyLength: bodyLength) },
            stallDuration: stall?.duration,
            bytesPerSecond: bytesPerSecond,
            closeWhenDone: lengthError != nil,
            writeGap: latency
        )
    }
}

/// Body faults with offsets resolved against the actual body length.
struct BodyPlan {
    var dropAfter: Int64?
    var stallAt: Int64?
    /// nil with a `stallAt` means stall until the connection closes.
    var stallDuration: Duration?
    var bytesPerSecond: Int64?
    /// A lying Content-Length leaves the connection unusable, so it must be closed.
    var closeWhenDone: Bool
    /// A pause before each write of the body (`latency:`).
    var writeGap: Duration?
}

/// `Content-Disposition: attachment` naming `filename` as RFC 6266 has servers do: `filename=`
/// for old clients, with what is not printable ASCII as `_` and `"` `\` escaped, then
/// `filename*=UTF-8''` with every byte but letters, digits and `!#$&+-.^_`|~` percent-encoded
/// (RFC 8187). Nothing of the name is made safe beyond that: a client must.
enum ContentDisposition {
    static func attachment(_ filename: String) -> String {
        let fallback = filename.unicodeScalars.map { scalar -> String in
            guard scalar.isASCII, scalar.value >= 0x20, scalar.value != 0x7F else { return "_" }
            return scalar == "\"" || scalar == "\\" ? "\\" + String(scalar) : String(scalar)
        }.joined()
        let attributeCharacters = Set("!#$&+-.^_`|~".utf8)
        let encoded = filename.utf8.map { byte -> String in
            let isAlphanumeric = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            if isAlphanumeric || attributeCharacters.contains(byte) { return String(UnicodeScalar(byte)) }
            let hex = Array("0123456789ABCDEF")
            return "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0x0F)])
        }.joined()
        return "attachment; filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)"
    }
}
