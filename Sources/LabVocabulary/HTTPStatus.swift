/// The reason phrases of the statuses the lab meets: for the story, the errors and HAR files.
public enum HTTPStatus {
    /// The reason phrase, or nil for a status without a well-known one.
    public static func reason(_ status: Int) -> String? {
        switch status {
        case 200: "OK"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 416: "Range Not Satisfiable"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: nil
        }
    }
}
