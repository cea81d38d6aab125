import Foundation
import LabPlatform
import Synchronization

/// A server on loopback that gives every request the same bytes and ends the connection:
/// answers that the lab server would never send. It counts the requests it read.
public final class CannedHTTPServer: Sendable {
    public let port: Int
    private let listener: Int32
    private let served = Atomic(0)
    public var requests: Int { served.load(ordering: .relaxed) }
    public var url: URL { URL(string: "http://127.0.0.1:\(port)/canned.bin")! }

    public convenience init(answer: Data) throws { try self.init(answers: [answer]) }

    /// The first request gets `answers[0]`, the second `answers[1]`, and every one after the
    /// last gets the last.
    public init(answers: [Data]) throws {
        guard let (descriptor, port) = boundLoopbackSocket(), listen(descriptor, 16) == 0 else {
            throw CocoaError(.fileReadUnknown)
        }
        listener = descriptor
        self.port = port
        let thread = Thread { [self] in
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                var request = [UInt8]()
                var buffer = [UInt8](repeating: 0, count: 4096)
                // The head ends at the first blank line; a body may follow in the same read.
                while !request.containsBlankLine {
                    let count = read(connection, &buffer, buffer.count)
                    guard count > 0 else { break }
                    request += buffer.prefix(count)
                }
                let number = served.add(1, ordering: .relaxed).oldValue
                let answer = answers[min(number, answers.count - 1)]
                _ = answer.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                // The answer is whole; what the client still sends (an upload's body) is read and
                // dropped for up to 2 s, so that the client is not cut off before it has read it.
                shutdown(connection, Int32(SHUT_WR))
                var patience = timeval(tv_sec: 2, tv_usec: 0)
                setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
                while read(connection, &buffer, buffer.count) > 0 {}
                close(connection)
            }
        }
        thread.start()
    }

    /// Ends the accepting thread.
    public func stop() { shutdown(listener, Int32(SHUT_RDWR)); close(listener) }
}

private extension Array where Element == UInt8 {
    var containsBlankLine: Bool {
        let blankLine = Array("\r\n\r\n".utf8)
        return count >= 4 && (0...(count - 4)).contains { self[$0..<($0 + 4)].elementsEqual(blankLine) }
    }
}
