import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
import LabVocabulary
#endif

extension URLSessionTask {
    /// `cancel()`, made to stop the bytes at once, as a cancel does on iOS.
    ///
    /// On Linux `cancel()` is queued on the session's work queue, the thread that reads the
    /// socket and hands chunks to the delegate queue. While the sender is faster than the
    /// delegate (always, with a bounded delegate queue), that queue never falls idle, so the
    /// cancel lands only when the body has ended: the rest of the file crosses the wire for
    /// nothing. So this first shuts down the task's connection: libcurl reads what is already in
    /// the socket, sees the connection end, and the task completes now. The cancel itself is then
    /// asked for from another thread, so no caller ever waits, not even the delegate queue.
    ///
    /// The task completes with an error (cancelled, or the connection lost), or without one when
    /// its body's end was the connection's close; its delegate still receives what had already
    /// arrived. Where the connection was shut down, the task ends from libcurl's side and no
    /// `cancel()` is sent to race that end (`CancelWhileCompleting`).
    public func cancelAtOnce() {
        let shutDown = (response?.url ?? currentRequest?.url).map { ConnectionShutdown.shutDownBusyConnections(to: $0) } ?? 0
        CancelWhileCompleting.cancel(self) {
            if shutDown > 0 {
                let deadline = Date().addingTimeInterval(2)
                while !CancelWhileCompleting.isCompleting(self), Date() < deadline { usleep(2_000) }
            }
            if !CancelWhileCompleting.isCompleting(self) { self.cancel() }
        }
    }
}

/// Finds this process's TCP connections to a server and shuts them down.
enum ConnectionShutdown {
    /// Shuts down every connection of this process to `url`'s host and port that is receiving:
    /// bytes wait to be read, or some arrived in the last `recentMilliseconds`. That is the
    /// transfer being stopped; idle connections kept for reuse are left alone. A transfer slower
    /// than that is not found, and needs nothing: its work queue falls idle between chunks, so a
    /// plain cancel lands at once. Returns how many connections were shut down.
    @discardableResult
    static func shutDownBusyConnections(to url: URL) -> Int {
        guard let host = url.host, let port = url.port ?? defaultPort(url.scheme) else { return 0 }
        let addresses = Set(resolve(host))
        guard !addresses.isEmpty else { return 0 }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        var shutDown = 0
        for descriptor in descriptors.compactMap({ Int32($0) }) {
            guard let peer = peerAddress(of: descriptor), peer.port == port, addresses.contains(peer.address),
                  isReceiving(descriptor)
            else { continue }
            if shutdown(descriptor, Int32(SHUT_RDWR)) == 0 { shutDown += 1 }
        }
        return shutDown
    }

    private static func defaultPort(_ scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// The host's addresses as text, as `getnameinfo` prints them (`127.0.0.1`, `::1`).
    private static func resolve(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard getaddrinfo(name, nil, &hints, &list) == 0 else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [String] = []
        var entry = list
        while let current = entry {
            if let address = current.pointee.ai_addr, let text = numericHost(address, length: current.pointee.ai_addrlen) {
                addresses.append(text)
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }

    /// The peer of a connected TCP socket; nil for anything else.
    private static func peerAddress(of descriptor: Int32) -> (address: String, port: Int)? {
        var type: Int32 = 0
        var typeLength = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &typeLength) == 0,
              type == Int32(SOCK_STREAM.rawValue)
        else { return nil }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        return withUnsafeMutablePointer(to: &storage) { pointer -> (address: String, port: Int)? in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address -> (address: String, port: Int)? in
                guard getpeername(descriptor, address, &length) == 0,
                      let text = numericHost(address, length: length)
                else { return nil }
                var service = [CChar](repeating: 0, count: 32)
                guard getnameinfo(address, length, nil, 0, &service, socklen_t(service.count), NI_NUMERICSERV) == 0,
                      let port = Int(cString(service))
                else { return nil }
                return (text, port)
            }
        }
    }

    private static func numericHost(_ address: UnsafePointer<sockaddr>, length: socklen_t) -> String? {
        var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else { return nil }
        return cString(text)
    }

    /// A C string from a fixed buffer, up to its terminating NUL.
    private static func cString(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static let recentMilliseconds: UInt32 = 100

    private static func isReceiving(_ descriptor: Int32) -> Bool {
        var unread: Int32 = 0
        if ioctl(descriptor, UInt(FIONREAD), &unread) == 0, unread > 0 { return true }
        var info = tcp_info()
        var length = socklen_t(MemoryLayout<tcp_info>.size)
        guard getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_INFO, &info, &length) == 0 else { return false }
        return info.tcpi_last_data_recv < recentMilliseconds
    }
}
