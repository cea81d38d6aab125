/// Texts for people: the server's `GET /` page and the fault reference `lab serve` prints.
import LabFixtures
import LabVocabulary
public enum HelpText {
    /// How fault scripts are written, with examples; shared by the index page and `lab serve`.
    public static let faultSyntax = """
        Faults (query item faults=<script>):
          Attempts are separated by ","; faults within one attempt are joined
          by "+"; "*N" after an attempt plays it N times (up to \(FaultScript.mostRepeats)). The N-th
          GET of a URL plays attempt N; attempts past the end behave like ok.
          A HEAD previews the next attempt without using it up.
          Each run=<token> value counts its attempts separately.
          Sizes are bytes or units (1000, 64KiB, 64MiB, 1GiB, 5MB); Npct is
          N percent of the body being sent.

          ok                       no fault
          drop:<bytes|Npct>        send that much body, then close the connection
          throttle:<bytes/s>       pace the body to that rate, e.g. throttle:2MiB
          stall:<bytes|Npct>       stop sending there and hold the connection open
          stall:<bytes|Npct>:<N>s  pause there for N seconds, then continue
          ignore-range             answer 200 and the full body despite a Range
          change                   new content, ETag and Last-Modified from here on
          status:<code>            answer that status (404, 500, 503...) and a text
          redirect:<n>             answer a chain of n 302 redirects first
          bad-length:<+n|-n>       declare a Content-Length off by n (at most 64GiB), then close
          shift-range:<+n|-n>      answer 206 with a range that starts n bytes off
          chunked                  no Content-Length: the body in chunked transfer coding
          disposition:<name>       Content-Disposition: attachment with that file
                                   name, in filename= and filename*=UTF-8'' forms;
                                   the name percent-encoded UTF-8 (%2F for /)
          latency:<ms>ms           wait that long before the head and before
                                   each body write after the first
          gzip                     Content-Encoding: gzip for a client whose
                                   Accept-Encoding allows it: 200 whatever the
                                   Range, a weak ETag, Vary, as nginx does, and
                                   the compressed length (files up to 1 GiB);
                                   a script with gzip serves a text file (log
                                   lines), which compresses ~4x
          cache-control:<value>    Cache-Control: that value on the file's
                                   answers, e.g. cache-control:max-age=3600;
                                   percent-encoded (%2C for ,)
          ignore-conditionals      answer 200 and the whole file even when
                                   If-None-Match or If-Modified-Since says the
                                   client's copy is current
          no-validators            no ETag and no Last-Modified: Range is still
                                   honoured, but If-Range never matches and
                                   no conditional request gets a 304
          same-date                Last-Modified as before the last change (a
                                   file changed within the second it was
                                   dated): only the ETag says it changed
          connections:<n>          allow n GETs of the URL at once; one more
                                   gets 503 and Retry-After: 1, as a server's
                                   per-client connection limit answers
          profile:<name>           a named network for the attempt: its rate,
                                   its latency (+ up to 20%) before the head,
                                   its loss as pauses of a retransmission
                                   timeout and rare resets:
        \(NetworkProfile.allCases.map { "                             \($0.summary)" }.joined(separator: "\n"))

        Examples:
          faults=drop:40pct,ok            attempt 1 closes at 40%, attempt 2 is fine
          faults=throttle:4MiB+drop:1MiB  slow, then cut after 1 MiB
          faults=ok,ignore-range          the resume gets the whole file again
          faults=drop:30pct,change        the file changes before the resume
          faults=status:404               the file is not there
          faults=redirect:3               three redirects before the file
          faults=chunked+latency:200ms    no length, and slow to start
          faults=gzip+drop:40pct,gzip     compressed, cut, and compressed again
          faults=drop:64KiB*40            cut at 64 KiB, 40 attempts in a row
          faults=throttle:2MiB+connections:4*100
                                          each connection at 2 MiB/s, four at once
          faults=ok,change                a second launch finds a new version
        """

    /// The upload endpoint; shared by the index page and `lab serve`.
    public static let upload = """
        Uploads:
          POST /upload   (Content-Type: multipart/form-data; boundary=...)
            Answers JSON: each file part's name, filename, contentType, bytes
            and sha256, the plain form fields as text, and bodyBytes. Parts are
            hashed as they arrive, never held in memory. Try:
              curl -F file=@some.bin -F note=hi http://127.0.0.1:8080/upload
            Limits: 100 parts, 16KiB of headers per part, 64KiB per form
            field, 8GiB per body (413 beyond). A malformed body is 400 with a
            one-line reason; other methods are 405.
        """

    static let indexPage = """
        Download Lab test server

        Fixtures are files computed on the fly: the same name and size always
        give the same bytes.

          GET|HEAD /fixtures/<name>?size=<size>&faults=<script>&run=<token>
            name     letters, digits, "." "_" "-" (at most 64)
            size     bytes or units like 64KiB or 1GiB (default 1MiB, max 64GiB)
            content  binary (random bytes) or text (log lines); default text
                     when the script has gzip, else binary
            Range (a single byte range) and If-Range are supported, and so are
            If-None-Match (weak comparison, *) and If-Modified-Since, with 304
            Not Modified; If-None-Match wins over If-Modified-Since. Responses
            carry ETag, Last-Modified and Repr-Digest (SHA-256 of the whole file);
            above 16MiB, Repr-Digest comes once the server has hashed the file,
            which it does while a client is connected, never before answering,
            unless the request says Want-Repr-Digest: sha-256=10.

          GET /fixtures/<name>.sha256?size=<size>&content=<content>
            the SHA-256 in sha256sum format (waits for the hashing; 503 with
            Retry-After while 8 large files are being hashed)

        \(upload)

        \(faultSyntax)

        """
}
