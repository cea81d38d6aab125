/// Each fault's spelling and meaning, declared once with its name: the parser reads how many
/// values a fault takes from here, and `lab serve --help` and the server's index page print the
/// list. Every switch is exhaustive, so a new fault is a compile error until it is described.
extension FaultScript.Name {
    /// What follows the name in a script.
    public enum Form: Sendable {
        /// Nothing: the fault itself (nil for `ok`).
        case bare(FaultScript.Fault?)
        /// One value after a colon, written as shown in the error for a missing one.
        case oneValue(shape: String)
        /// An offset, and optionally how long (`stall` alone).
        case offsetAndDuration
    }

    public var form: Form {
        switch self {
        case .ok: .bare(nil)
        case .ignoreRange: .bare(.ignoreRange)
        case .change: .bare(.change)
        case .chunked: .bare(.chunked)
        case .gzip: .bare(.gzip)
        case .ignoreConditionals: .bare(.ignoreConditionals)
        case .noValidators: .bare(.noValidators)
        case .sameDate: .bare(.sameDate)
        case .stall: .offsetAndDuration
        case .drop: .oneValue(shape: "drop:<bytes or Npct>")
        case .throttle: .oneValue(shape: "throttle:<bytes per second>")
        case .status: .oneValue(shape: "status:<code>")
        case .redirect: .oneValue(shape: "redirect:<hops>")
        case .badLength: .oneValue(shape: "bad-length:+<bytes> or bad-length:-<bytes>")
        case .shiftRange: .oneValue(shape: "shift-range:+n or shift-range:-n")
        case .disposition: .oneValue(shape: "disposition:<file name, percent-encoded>")
        case .cacheControl: .oneValue(shape: "cache-control:<value, percent-encoded> (max-age=3600, no-store)")
        case .latency: .oneValue(shape: "latency:<milliseconds>ms")
        case .profile: .oneValue(shape: "profile:<name> (known: \(NetworkProfile.allCases.map(\.rawValue).joined(separator: ", ")))")
        case .connections: .oneValue(shape: "connections:<GETs at once, 1 to \(FaultScript.mostConnections)>")
        }
    }

    /// The fault's lines in the reference: how it is written, and what the server then does.
    public var reference: [(written: String, does: String)] {
        switch self {
        case .ok: [("ok", "no fault")]
        case .drop: [("drop:<bytes|Npct>", "send that much body, then close the connection")]
        case .throttle: [("throttle:<bytes/s>", "pace the body to that rate, e.g. throttle:2MiB")]
        case .stall: [("stall:<bytes|Npct>", "stop sending there and hold the connection open"),
                      ("stall:<bytes|Npct>:<N>s", "pause there for N seconds, then continue")]
        case .ignoreRange: [("ignore-range", "answer 200 and the full body despite a Range")]
        case .change: [("change", "new content, ETag and Last-Modified from here on")]
        case .status: [("status:<code>", "answer that status (404, 500, 503...) and a text")]
        case .redirect: [("redirect:<n>", "answer a chain of n 302 redirects first")]
        case .badLength: [("bad-length:<+n|-n>",
                           "declare a Content-Length off by n (at most \(ByteSize.format(ByteSize.largestFixture))), then close")]
        case .shiftRange: [("shift-range:<+n|-n>", "answer 206 with a range that starts n bytes off")]
        case .chunked: [("chunked", "no Content-Length: the body in chunked transfer coding")]
        case .disposition: [("disposition:<name>", "Content-Disposition: attachment with that file name, in filename= and "
                             + "filename*=UTF-8'' forms; the name percent-encoded UTF-8 (%2F for /)")]
        case .latency: [("latency:<ms>ms", "wait that long before the head and before each body write after the first")]
        case .gzip: [("gzip", "Content-Encoding: gzip for a client whose Accept-Encoding allows it: 200 whatever the Range, "
                      + "a weak ETag, Vary, as nginx does, and the compressed length (files up to 1 GiB); a script with gzip "
                      + "serves a text file (log lines), which compresses ~4x")]
        case .cacheControl: [("cache-control:<value>", "Cache-Control: that value on the file's answers, e.g. "
                              + "cache-control:max-age=3600; percent-encoded (%2C for ,)")]
        case .ignoreConditionals: [("ignore-conditionals", "answer 200 and the whole file even when If-None-Match or "
                                    + "If-Modified-Since says the client's copy is current")]
        case .noValidators: [("no-validators", "no ETag and no Last-Modified: Range is still honoured, but If-Range never "
                              + "matches and no conditional request gets a 304")]
        case .sameDate: [("same-date", "Last-Modified as before the last change (a file changed within the second it was "
                          + "dated): only the ETag says it changed")]
        case .connections: [("connections:<n>", "allow n GETs of the URL at once; one more gets 503 and Retry-After: 1, "
                              + "as a server's per-client connection limit answers")]
        case .profile: [("profile:<name>", "a named network for the attempt: its rate, its latency (+ up to 20%) before "
                         + "the head, its loss as pauses of a retransmission timeout and rare resets:")]
                + NetworkProfile.allCases.map { ("", "  " + $0.summary) }
        }
    }
}

extension FaultScript {
    /// Every fault, a line or more each, as `lab serve --help` lists them: the spelling in a
    /// column of its own, the meaning wrapped at `width` characters.
    public static func reference(indent: Int = 2, width: Int = 78) -> String {
        let column = 25
        var lines: [String] = []
        for name in Name.allCases {
            for (written, does) in name.reference {
                let wrapped = wrap(does, width: width - indent - column)
                for (index, line) in wrapped.enumerated() {
                    let left = index == 0 ? written : ""
                    lines.append(String(repeating: " ", count: indent) + left.padding(toLength: column, withPad: " ", startingAt: 0) + line)
                }
            }
        }
        return lines.map { $0.replacing(/\s+$/, with: "") }.joined(separator: "\n")
    }

    /// `text` in lines of at most `width` characters, broken at spaces; leading spaces kept.
    static func wrap(_ text: String, width: Int) -> [String] {
        let lead = String(text.prefix { $0 == " " })
        var lines: [String] = []
        var line = lead
        for word in text.dropFirst(lead.count).split(separator: " ") {
            if line.count > lead.count, line.count + 1 + word.count > width {
                lines.append(line)
                line = lead
            }
            line += (line.count > lead.count ? " " : "") + word
        }
        lines.append(line)
        return lines
    }
}
