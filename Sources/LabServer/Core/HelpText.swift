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

        \(FaultScript.reference())

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
