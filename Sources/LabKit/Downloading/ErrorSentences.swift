import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A one-line description of any error a transfer or a file can end with, in a sentence where
/// Foundation on Linux gives only a domain and a number.
public func describe(_ error: any Error) -> String {
    if let error = error as? URLError {
        return "\(error.sentence) (URLError \(error.errorCode))"
    }
    if let error = error as? DownloadError { return error.description }
    // Data(contentsOf:) wraps the transfer's URLError in a bare Cocoa error; the cause is inside.
    if let transferError = underlyingURLError(of: error) { return describe(transferError) }
    if let error = error as? CocoaError { return error.sentence }
    return error.localizedDescription
}

extension URLError {
    /// Foundation on Linux describes several codes by their number alone ("The operation could
    /// not be completed. (NSURLErrorDomain error -1001.)"): those get a sentence.
    var sentence: String {
        let foundations = localizedDescription
        guard foundations.contains("NSURLErrorDomain error") else { return foundations }
        return switch code {
        case .timedOut: "timed out: nothing arrived for too long (see --idle-timeout)"
        case .cannotParseResponse: "the server's answer is not HTTP that can be read"
        case .badServerResponse: "the server's answer breaks HTTP's rules"
        case .cannotConnectToHost: "cannot connect to the server"
        case .cannotFindHost: "cannot find the server's host"
        case .networkConnectionLost: "the connection was lost"
        case .notConnectedToInternet: "no network"
        case .httpTooManyRedirects: "too many redirects"
        case .redirectToNonExistentLocation: "a redirect to nowhere"
        case .unsupportedURL: "the URL's scheme is not one the lab downloads from (http or https)"
        case .badURL: "a malformed URL"
        case .cancelled: "cancelled"
        case .dataLengthExceedsMaximum: "the body is larger than allowed"
        case .zeroByteResource: "the server sent no bytes"
        default: foundations
        }
    }
}

extension CocoaError {
    /// Foundation's file errors on Linux say "NSCocoaErrorDomain error 512"; the POSIX cause
    /// underneath says what happened.
    var sentence: String {
        let foundations = localizedDescription
        guard foundations.contains("NSCocoaErrorDomain error") else { return foundations }
        if let cause = (self as NSError).userInfo[NSUnderlyingErrorKey] as? NSError, cause.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(cause.code))).lowercased()
        }
        let path = (self as NSError).userInfo[NSFilePathErrorKey] as? String
        let what = isFileError && code.rawValue >= 512 ? "cannot write" : "cannot read"
        return path.map { "\(what) \($0)" } ?? "\(what) a file"
    }
}

/// The URLError that an error such as Data(contentsOf:)'s wraps, if any.
func underlyingURLError(of error: any Error) -> URLError? {
    if let error = error as? URLError { return error }
    return (error as NSError).userInfo[NSUnderlyingErrorKey] as? URLError
}
