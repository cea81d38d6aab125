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

extension Platform {
    /// A port on 127.0.0.1 that the kernel picked for a socket bound to port 0, released again
    /// for a server started next (nginx); nil when no socket could be bound.
    public static func freeLoopbackPort() -> Int? {
        let descriptor = socket(AF_INET, streamSocket, 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    /// Whether something accepts a TCP connection on 127.0.0.1:`port` now.
    public static func acceptsConnections(onLoopbackPort port: Int) -> Bool {
        let descriptor = socket(AF_INET, streamSocket, 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
