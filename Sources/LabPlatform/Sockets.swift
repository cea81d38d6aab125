import Foundation

/// Socket helpers that read the same on both systems (getaddrinfo(3), getpeername(2),
/// getnameinfo(3)); only the socket type's spelling comes from the seam.
enum Sockets {
    /// The host's addresses as text, as `getnameinfo` prints them (`127.0.0.1`, `::1`).
    static func resolve(_ host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_socktype = Platform.streamSocket
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
    static func peerAddress(of descriptor: Int32) -> (address: String, port: Int)? {
        var type: Int32 = 0
        var typeLength = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &typeLength) == 0, type == Platform.streamSocket
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
}

extension Platform {
    /// Shuts down this process's connections to `url`'s host and port that are receiving (see
    /// `shutDownReceivingConnections(to:port:)`); returns how many.
    public static func shutDownReceivingConnections(to url: URL) -> Int {
        guard let host = url.host, let port = url.port ?? defaultPort(url.scheme) else { return 0 }
        let addresses = Set(Sockets.resolve(host))
        guard !addresses.isEmpty else { return 0 }
        return shutDownReceivingConnections(to: addresses, port: port)
    }

    private static func defaultPort(_ scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }
}
