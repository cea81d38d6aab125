/// A one-line error: bad input to the lab (a size, a fault script) or a server that cannot
/// start. It ends up in an HTTP 400 body or on a terminal, where a student reads it at a glance.
public struct LabError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

import Foundation

/// The POSIX error that Foundation wraps in a Cocoa error ("The operation could not be
/// completed"), if there is one: the real cause, such as `File too large`.
public func posixError(under error: any Error) -> POSIXError? {
    var current: any Error = error
    for _ in 0..<8 {  // a chain this deep is not Foundation's
        if let posix = current as? POSIXError { return posix }
        let wrapped = current as NSError
        if wrapped.domain == NSPOSIXErrorDomain { return POSIXErrorCode(rawValue: Int32(wrapped.code)).map { POSIXError($0) } }
        // Swift Foundation puts a POSIXError value here, not an NSError.
        guard let underlying = wrapped.userInfo[NSUnderlyingErrorKey] as? any Error else { return nil }
        current = underlying
    }
    return nil
}

/// The system's own words for a failed file operation: `File too large`, `No space left on device`.
public func systemReason(of error: any Error) -> String {
    guard let posix = posixError(under: error), let text = strerror(posix.code.rawValue) else {
        return error.localizedDescription
    }
    return String(decoding: UnsafeRawBufferPointer(start: text, count: strlen(text)), as: UTF8.self)
}
