import NIOCore

/// `--listen HOST:PORT`: an IP address of this machine (or localhost) and a port.
enum ListenAddress {
    static func parse(_ text: String) throws -> SocketAddress {
        guard let colon = text.lastIndex(of: ":") else { throw ListenError("expected HOST:PORT, e.g. 0.0.0.0:8080, got \"\(text)\"") }
        var host = String(text[..<colon])
        let portText = text[text.index(after: colon)...]
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw ListenError("the port must be a number from 0 to 65535, got \"\(portText)\"")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host == "localhost" { host = "127.0.0.1" }
        do {
            return try SocketAddress(ipAddress: host, port: port)
        } catch {
            throw ListenError("\"\(host)\" is not an IP address; give one of this machine's, or 0.0.0.0 for all")
        }
    }

    static func isLoopback(_ address: SocketAddress) -> Bool {
        guard let ip = address.ipAddress else { return false }
        return ip.hasPrefix("127.") || ip == "::1"
    }

    /// The addresses students can type: the one listened on, or for 0.0.0.0 (or ::) every
    /// address of this machine's network interfaces but loopback.
    static func hostsToShow(_ address: SocketAddress) -> [String] {
        guard let ip = address.ipAddress else { return ["127.0.0.1"] }
        guard ip == "0.0.0.0" || ip == "::" else { return [ip] }
        let devices = (try? System.enumerateDevices()) ?? []
        let addresses = devices.compactMap { device -> String? in
            guard let found = device.address?.ipAddress, case .v4 = device.address!, !found.hasPrefix("127.") else { return nil }
            return found
        }
        var seen = Set<String>()
        let unique = addresses.filter { seen.insert($0).inserted }
        return unique.isEmpty ? ["127.0.0.1"] : unique
    }

    /// An IPv6 address in brackets, as a URL writes it.
    static func urlHost(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }
}

struct ListenError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
